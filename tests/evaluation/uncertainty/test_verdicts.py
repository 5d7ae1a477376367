"""The compare page's verdict under every completion of the labels: p-values, shares, settled or not."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.metrics.stats import paired_randomization_test
from evaluation.uncertainty import randomization_p_values, verdict_shares

NAN = math.nan
CLEARLY_BETTER = [0.5] * 10  # exact p = 2 / 2^10 ≈ 0.002: "real improvement" at any sample of signs
CLEARLY_WORSE = [-0.5] * 10
NO_DIFFERENCE = [0.0] * 10  # every permutation ties: p = 1


def test_randomization_p_values_equal_the_compare_pages_test_for_the_same_seed():
    rng = np.random.default_rng(7)
    a, b = rng.random(30), rng.random(30)
    rows = np.stack([a - b, (a - b)[::-1], a - 0.2 - b])

    p = randomization_p_values(rows, n_permutations=3000, rng=np.random.default_rng(11))

    expected = [
        paired_randomization_test(a, b, n_permutations=3000, seed=11),
        paired_randomization_test(a[::-1], b[::-1], n_permutations=3000, seed=11),
        paired_randomization_test(a - 0.2, b, n_permutations=3000, seed=11),
    ]
    assert p.tolist() == expected


def test_randomization_p_values_leave_out_undefined_questions_and_rows():
    rows = np.array([NO_DIFFERENCE[:3] + [NAN], [NAN] * 4])

    p = randomization_p_values(rows, n_permutations=99, rng=np.random.default_rng(0))

    assert p[0] == 1.0  # (1 + 99) / (1 + 99): every permutation ties with 0
    assert math.isnan(p[1])


def test_verdict_shares_settle_at_95_percent_of_draws():
    rows = np.array([CLEARLY_BETTER] * 19 + [NO_DIFFERENCE])

    result = verdict_shares(rows, n_permutations=2000)

    assert result.shares == (0.95, 0.05, 0.0)
    assert result.settled == "real improvement"
    assert result.share("within noise") == 0.05


def test_verdict_shares_below_95_percent_are_not_settled():
    rows = np.array([CLEARLY_BETTER] * 18 + [NO_DIFFERENCE] * 2)

    result = verdict_shares(rows, n_permutations=2000)

    assert result.shares == (0.9, 0.1, 0.0)
    assert result.settled == ""


def test_verdict_shares_drop_and_noise():
    assert verdict_shares(np.array([CLEARLY_WORSE] * 4), n_permutations=2000).settled == "real drop"
    assert verdict_shares(np.array([NO_DIFFERENCE]), n_permutations=2000).settled == "within noise"
    # No question defined in any draw: nothing to test, as the compare page says "within noise".
    assert verdict_shares(np.array([[NAN, NAN]]), n_permutations=10).shares == (0.0, 1.0, 0.0)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"differences": np.zeros(3)}, "must be \\(draws, questions\\)"),
        ({"differences": np.zeros((0, 3))}, "at least one draw"),
        ({"differences": np.array([[math.inf, 0.0]])}, "infinite"),
        ({"differences": np.zeros((1, 3)), "alpha": 1.0}, "alpha"),
        ({"differences": np.zeros((1, 3)), "n_permutations": 0}, "n_permutations"),
    ],
)
def test_verdict_shares_bad_input_is_a_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        verdict_shares(**kwargs)
