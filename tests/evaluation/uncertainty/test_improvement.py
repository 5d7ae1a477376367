"""Probability that the challenger beats the champion: known answers and one deciding unknown."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.uncertainty import judging_arrays, probability_of_improvement, relevance_probabilities

NAN = math.nan
SURE = np.array([[1.0, 0, 0, 0]])


def _probs(arrays, rows: dict[int, list[float]]):
    probs = relevance_probabilities(arrays)
    for pair, row in rows.items():
        probs[pair] = row
    return probs


def test_probability_of_improvement_is_1_when_every_question_improves():
    # Two questions, all labelled; the challenger puts the 3-star answer first on both, the champion second.
    arrays = judging_arrays(
        pair_question=[0, 0, 1, 1],
        labels=[0, 3, 0, 3],
        run_pairs=[[[0, 1], [2, 3]], [[1, 0], [3, 2]]],
        k=2,
    )
    result = probability_of_improvement(arrays, relevance_probabilities(arrays))
    assert result.probability == 1.0
    assert result.expected_difference == pytest.approx(1 - 1 / math.log2(3))
    assert result.label_sd == pytest.approx(0.0, abs=1e-12)


def test_probability_of_improvement_is_0_when_every_question_gets_worse():
    arrays = judging_arrays(pair_question=[0, 0], labels=[0, 3], run_pairs=[[[1, 0]], [[0, 1]]], k=2)
    assert probability_of_improvement(arrays, relevance_probabilities(arrays)).probability == 0.0


def test_probability_of_improvement_is_one_half_for_identical_runs():
    arrays = judging_arrays(pair_question=[0, 0], labels=[0, 3], run_pairs=[[[1, 0]], [[1, 0]]], k=2)
    assert probability_of_improvement(arrays, relevance_probabilities(arrays)).probability == 0.5


def test_probability_of_improvement_follows_the_deciding_unknown():
    # Champion: [A(3 stars), X]; challenger: [X, A]. X unlabelled: 0 stars (p 0.7) -> the challenger
    # is worse; 3 stars (p 0.3) -> both orders are ideal, a tie (counts 1/2). P = 0.3 / 2 = 0.15.
    arrays = judging_arrays(pair_question=[0, 0], labels=[3, NAN], run_pairs=[[[0, 1]], [[1, 0]]], k=2)
    probs = _probs(arrays, {1: [0.7, 0, 0, 0.3]})
    result = probability_of_improvement(arrays, probs, n_samples=20_000, seed=1)
    # 20,000 draws: the standard error of the 0.3 share is 0.0032, so 0.01 is 3 standard errors of 1/2.
    assert result.probability == pytest.approx(0.15, abs=0.01)
    assert result.run_means[0] == 1.0
    assert result.run_means[1] == pytest.approx(0.7 * (3 / math.log2(3)) / 3 + 0.3, abs=0.01)


def test_probability_of_improvement_rejects_bad_probabilities_and_runs():
    arrays = judging_arrays(pair_question=[0], labels=[NAN], run_pairs=[[[0]], [[0]]], k=1)
    with pytest.raises(ValueError, match="probabilities"):
        probability_of_improvement(arrays, np.array([[0.5, 0, 0, 0]]))
    with pytest.raises(ValueError, match="challenger"):
        probability_of_improvement(arrays, np.array([[1.0, 0, 0, 0]]), challenger=2)
