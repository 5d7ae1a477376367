import math

import pytest

import judges.stats.kendall as kendall
from judges.stats.kendall import kendall_tau_b, kendall_tau_b_items


def test_kendall_tau_b_one_swap_hand_computed():
    # Pairs (1,2) and (1,3) concordant, (2,3) discordant: (2 − 1) / 3.
    assert math.isclose(kendall_tau_b([0.5, 0.6, 0.7], [0.5, 0.7, 0.6]), 1 / 3)


def test_kendall_tau_b_with_a_tie_hand_computed():
    # x ties systems 1 and 2: n0 = 3, n1 = 1, n2 = 0; n_c = 2, n_d = 0 → 2 / sqrt(2 · 3).
    assert math.isclose(kendall_tau_b([1, 1, 2], [1, 2, 3]), 2 / math.sqrt(6))


def test_kendall_tau_b_matches_scipy_on_ties():
    # Imported here: scipy.stats is 0.7 s of CPU, which every xdist worker would spend collecting the file.
    from scipy.stats import kendalltau

    x = [0.71, 0.65, 0.65, 0.80, 0.52, 0.71]
    y = [0.69, 0.66, 0.61, 0.83, 0.55, 0.70]
    assert math.isclose(kendall_tau_b(x, y), kendalltau(x, y).statistic)


@pytest.mark.parametrize(("x", "y"), [([1.0], [1.0]), ([1, 1], [1, 2]), ([1, 2], [1])])
def test_kendall_tau_b_undefined_raises(x, y):
    with pytest.raises(ValueError):
        kendall_tau_b(x, y)


def test_kendall_tau_b_items_equals_the_pairwise_formula_across_blocks(monkeypatch):
    monkeypatch.setattr(kendall, "ROWS_A_BLOCK", 2)  # five items: three blocks
    x, y = [3, 1, 1, 0, 2], [1.7, 0.8, 0.3, 0.0, 0.8]
    assert math.isclose(kendall_tau_b_items(x, y), kendall_tau_b(x, y))


@pytest.mark.parametrize(("x", "y"), [([1.0], [1.0]), ([2, 2, 2], [1, 2, 3])])
def test_kendall_tau_b_items_undefined_is_none(x, y):
    assert kendall_tau_b_items(x, y) is None
