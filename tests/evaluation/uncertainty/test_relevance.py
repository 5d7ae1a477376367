"""Predicted stars of unlabelled pairs: smoothed frequencies by rank bucket and agreement."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.uncertainty import judging_arrays, relevance_probabilities

NAN = math.nan


def test_relevance_probabilities_uniform_without_labels():
    arrays = judging_arrays(pair_question=[0, 0], labels=[NAN, NAN], run_pairs=[[[0, 1]]], k=2)
    np.testing.assert_allclose(relevance_probabilities(arrays), np.full((2, 4), 0.25))


def test_relevance_probabilities_smoothed_by_bucket():
    # Rank-1 pairs of three questions: two labelled 3, one unlabelled. p0 = (0,0,0,2 counts + 1) / 6
    # = [1/6, 1/6, 1/6, 1/2]; bucket "rank 1, every run": counts [0,0,0,2];
    # P = (counts + 4 p0) / (2 + 4) = [4/36, 4/36, 4/36, (2 + 2) / 6].
    arrays = judging_arrays(pair_question=[0, 1, 2], labels=[3, 3, NAN], run_pairs=[[[0], [1], [2]]], k=1)
    probs = relevance_probabilities(arrays)
    assert probs[2] == pytest.approx([4 / 36, 4 / 36, 4 / 36, 4 / 6])
    assert probs[0].tolist() == [0, 0, 0, 1]


def test_relevance_probabilities_rejects_a_bad_prior():
    arrays = judging_arrays(pair_question=[0], labels=[NAN], run_pairs=[[[0]]], k=1)
    with pytest.raises(ValueError, match="prior_weight"):
        relevance_probabilities(arrays, prior_weight=0)


def test_relevance_probabilities_question_effect_by_hand():
    # One question, one run, k = 3: 3 stars at ranks 1 and 2, rank 3 unlabelled. p0 = [1,1,1,3]/6;
    # ranks 2-3 share a bucket with counts [0,0,0,1]: (counts + 4 p0) / 5 = [2,2,2,9]/15, as does rank 1's.
    # θ = (R + 4) / (E + 4) with R = 2 relevant, E = 13/15 + 13/15: θ = 45/43. Odds 13/2 · 45/43 give
    # P(relevant) = 585/671, shared 2:2:9 by 1-3 stars: [86, 90, 90, 405] / 671.
    arrays = judging_arrays(pair_question=[0, 0, 0], labels=[3, 3, NAN], run_pairs=[[[0, 1, 2]]], k=3)
    probs = relevance_probabilities(arrays)
    assert probs[2] == pytest.approx(np.array([86, 90, 90, 405]) / 671)
