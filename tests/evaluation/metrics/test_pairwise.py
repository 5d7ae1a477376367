"""compare_pairs: every pair of runs, its wins, losses and ties, and Holm over the pairs."""

import math

import numpy as np
import pytest

from evaluation.metrics.pairwise import compare_pairs
from evaluation.metrics.stats import compare_runs

NAN = math.nan
# questions × runs
MATRIX = [
    [0.5, 0.7, 0.7],
    [0.2, 0.2, 0.9],
    [1.0, 0.4, NAN],
    [NAN, 0.3, 0.1],
]


def test_compare_pairs_counts_and_differences():
    pairs = compare_pairs(MATRIX, n_resamples=200, n_permutations=200)

    assert [(p.a, p.b) for p in pairs] == [(0, 1), (0, 2), (1, 2)]
    assert [(p.winners, p.losers, p.ties) for p in pairs] == [(1, 1, 1), (2, 0, 0), (1, 1, 1)]
    assert [p.comparison.n for p in pairs] == [3, 2, 3]
    assert pairs[0].comparison.difference == pytest.approx((0.2 + 0 - 0.6) / 3)
    assert pairs[1].comparison.difference == pytest.approx((0.2 + 0.7) / 2)
    assert pairs[2].comparison.difference == pytest.approx((0 + 0.7 - 0.2) / 3)


def test_compare_pairs_p_values_are_compare_runs_then_holm():
    pairs = compare_pairs(MATRIX, seed=3, n_resamples=200, n_permutations=200)

    raw = [
        compare_runs(
            np.array(MATRIX)[:, b], np.array(MATRIX)[:, a], seed=3, n_resamples=200, n_permutations=200
        ).p_value
        for a, b in ((0, 1), (0, 2), (1, 2))
    ]
    assert [p.comparison.p_value for p in pairs] == raw
    smallest, middle, largest = sorted(raw)
    by_rank = {smallest: 3 * smallest, middle: max(3 * smallest, 2 * middle)}
    by_rank[largest] = max(by_rank[middle], largest)
    assert [p.p_holm for p in pairs] == pytest.approx([min(1.0, by_rank[p]) for p in raw])


def test_compare_pairs_needs_two_runs():
    with pytest.raises(ValueError, match="2 or more runs"):
        compare_pairs([[0.1], [0.2]])
