"""Which pair decides, and how many ratings settle the answer."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.uncertainty import judging_arrays, pair_values, ratings_to_settle

NAN = math.nan
UNIFORM = [0.25, 0.25, 0.25, 0.25]


def test_pair_values_a_pair_at_the_same_rank_in_both_runs_does_not_decide():
    # Both runs put X at rank 1; only the challenger has Y (rank 2), only the champion has Z (rank 2)...
    # X's effect on the difference is 0; Y and Z decide.
    arrays = judging_arrays(
        pair_question=[0, 0, 0], labels=[NAN, NAN, NAN], run_pairs=[[[0, 2]], [[0, 1]]], k=2
    )
    probs = np.array([UNIFORM] * 3)
    values = pair_values(arrays, probs)
    assert values[0] == pytest.approx(0.0)
    assert values[1] > 0 and values[2] > 0
    assert values[1] == pytest.approx(values[2])


def test_pair_values_headline_by_hand():
    # One question, k = 1, one unlabelled pair at rank 1 with stars uniform: ḡ = 1.5, IDCG = 1.5,
    # NDCG = 1, ι = 1, derivative (1 − 1·1)/1.5 = 0: the only answer cannot change its own NDCG (it is
    # the ideal whatever it is, whenever it is defined).
    arrays = judging_arrays(pair_question=[0], labels=[NAN], run_pairs=[[[0]]], k=1)
    assert pair_values(arrays, np.array([UNIFORM]), challenger=None)[0] == pytest.approx(0.0)
    # A known 3-star answer not retrieved: ḡ(X) = 1.5 at rank 1, IDCG = 3, NDCG = 0.5, ι(X) = 0
    # (the ideal's one slot is the 3): derivative 1/3, Var(g) = 1.25 -> value 1.25 / 9.
    arrays = judging_arrays(pair_question=[0, 0], labels=[NAN, 3], run_pairs=[[[0]]], k=1)
    values = pair_values(arrays, np.array([UNIFORM, [0, 0, 0, 1]]), challenger=None)
    assert values[0] == pytest.approx(1.25 / 9)
    assert values[1] == 0.0


def test_ratings_to_settle_counts_the_largest_terms_first():
    # variances 0.04, 0.01, 0.0001: remaining sd after 0, 1, 2, 3 ratings: 0.2243, 0.1005, 0.01, 0.
    values = np.array([0.01, 0.04, 0.0001])
    assert ratings_to_settle(values, 0.2) == 1
    assert ratings_to_settle(values, 0.01) == 2
    assert ratings_to_settle(values, 0.0) == 3
    assert ratings_to_settle(values, 1.0) == 0
    with pytest.raises(ValueError, match="target"):
        ratings_to_settle(values, -1)
