"""Exact NDCG@k bounds with unlabelled answers: hand-computed cases and a brute-force cross-check."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

from evaluation.uncertainty import judging_arrays, mean_bounds, ndcg_bounds, ndcg_for_labels

NAN = math.nan
L3, L11 = math.log2(3), math.log2(11)


def test_ndcg_bounds_unknown_at_rank_10_lowest_when_it_is_perfect():
    # Known: 1 star at rank 1, 0 at ranks 2-9; rank 10 unlabelled. At 0 stars NDCG = 1; at 3 stars
    # DCG = 1 + 3/log2(11), IDCG = 3 + 1/log2(3): 0.514 — lower than at 0, 1 (0.790) or 2 (0.600) stars.
    arrays = judging_arrays(
        pair_question=[0] * 10, labels=[1] + [0] * 8 + [NAN], run_pairs=[[list(range(10))]], k=10
    )
    bounds = ndcg_bounds(arrays)
    assert bounds.low[0] == pytest.approx((1 + 3 / L11) / (3 + 1 / L3))
    assert bounds.high[0] == 1.0
    assert bounds.unknown_in_top_k.tolist() == [1]


def test_ndcg_bounds_with_an_unretrieved_known_label():
    # Known: 3 stars at rank 1 and a 2-star answer nobody retrieved; rank 2 unlabelled (k = 2).
    # 0 stars: 3 / (3 + 2/log2 3) = 0.692; 2 stars: (3 + 2/log2 3) / (3 + 2/log2 3) = 1;
    # 3 stars: (3 + 3/log2 3) / (3 + 3/log2 3) = 1 as well; 1 star: (3 + 1/log2 3)/(3 + 2/log2 3) = 0.856.
    arrays = judging_arrays(pair_question=[0, 0, 0], labels=[3, NAN, 2], run_pairs=[[[0, 1]]], k=2)
    bounds = ndcg_bounds(arrays)
    assert bounds.high[0] == pytest.approx(1.0)
    assert bounds.low[0] == pytest.approx(3 / (3 + 2 / L3))


def test_ndcg_bounds_question_defined_only_if_an_unknown_is_relevant():
    # No known good answer; rank 1 unlabelled, rank 2 labelled 0. Undefined at 0 stars; otherwise the
    # relevant answer is at rank 1 and NDCG = 1.
    arrays = judging_arrays(pair_question=[0, 0], labels=[NAN, 0], run_pairs=[[[0, 1]]], k=2)
    bounds = ndcg_bounds(arrays)
    assert bounds.low[0] == 1.0 and bounds.high[0] == 1.0
    assert not bounds.always_defined[0] and bounds.possibly_defined[0]


def test_mean_bounds_leaves_out_or_includes_a_maybe_defined_question():
    # Question 0: fully labelled, ranked 0 then 3 stars: DCG = 3/log2 3, IDCG = 3.
    # Question 1: as above, 1.0 when defined, otherwise left out.
    arrays = judging_arrays(
        pair_question=[0, 0, 1, 1], labels=[0, 3, NAN, 0], run_pairs=[[[0, 1], [2, 3]]], k=2
    )
    q0 = (3 / L3) / 3
    result = mean_bounds(ndcg_bounds(arrays))
    assert result.low == pytest.approx(q0)  # question 1 left out
    assert result.high == pytest.approx((q0 + 1.0) / 2)
    assert result.unknown_in_top_k == 1


def test_ndcg_bounds_match_brute_force_over_every_assignment():
    rng = np.random.default_rng(7)
    for _ in range(60):
        n_q, k = 3, 4
        pair_question, labels = [], []
        runs = np.full((1, n_q, k), -1)
        for q in range(n_q):
            n = int(rng.integers(1, 7))
            base = len(labels)
            for _ in range(n):
                pair_question.append(q)
                labels.append(NAN if rng.random() < 0.4 else float(rng.integers(0, 4)))
            m = int(min(n, rng.integers(0, k + 1)))
            runs[0, q, :m] = base + rng.permutation(n)[:m]
        gain = str(rng.choice(["linear", "exponential"]))
        arrays = judging_arrays(pair_question=pair_question, labels=labels, run_pairs=runs, k=k, gain=gain)
        bounds = ndcg_bounds(arrays)
        label_array = np.array(labels)
        in_top = set(runs[runs >= 0].tolist())
        unknown = [p for p in range(len(labels)) if math.isnan(labels[p]) and p in in_top]
        values = []
        for combo in itertools.product(range(4), repeat=len(unknown)):
            stars = np.nan_to_num(label_array, nan=0.0)
            stars[unknown] = combo
            values.append(ndcg_for_labels(arrays, stars)[0])
        table = np.array(values)
        low = np.where(np.isnan(table), np.inf, table).min(axis=0)
        high = np.where(np.isnan(table), -np.inf, table).max(axis=0)
        np.testing.assert_allclose(np.where(np.isinf(low), NAN, low), bounds.low)
        np.testing.assert_allclose(np.where(np.isinf(high), NAN, high), bounds.high)
        means = [row[~np.isnan(row)].mean() for row in table if (~np.isnan(row)).any()]
        result = mean_bounds(bounds)
        assert result.low == pytest.approx(min(means)) and result.high == pytest.approx(max(means))


def test_ndcg_bounds_no_unknown_gives_the_ndcg():
    arrays = judging_arrays(pair_question=[0, 0], labels=[0, 3], run_pairs=[[[0, 1]]], k=2)
    bounds = ndcg_bounds(arrays)
    assert bounds.low[0] == bounds.high[0] == pytest.approx(1 / L3)


def test_ndcg_bounds_rejects_a_run_out_of_range():
    arrays = judging_arrays(pair_question=[0], labels=[1], run_pairs=[[[0]]], k=1)
    with pytest.raises(ValueError, match="run must be"):
        ndcg_bounds(arrays, run=1)


def test_judging_arrays_rejects_bad_labels_and_foreign_pairs():
    with pytest.raises(ValueError, match="whole stars"):
        judging_arrays(pair_question=[0], labels=[4], run_pairs=[[[0]]], k=1)
    with pytest.raises(ValueError, match="another question"):
        judging_arrays(pair_question=[0, 1], labels=[1, 1], run_pairs=[[[1], [0]]], k=1)
    with pytest.raises(ValueError, match="twice"):
        judging_arrays(pair_question=[0, 0], labels=[1, 1], run_pairs=[[[0, 0]]], k=2)
