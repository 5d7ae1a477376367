"""rankers.propagation: scores from similar training questions' ratings, by hand."""

import numpy as np
import pytest
from scipy import sparse

from rankers.propagation import neighbour_weights, propagation_scores

TRAIN = np.eye(3)  # three training questions, orthogonal unit embeddings
GAINS = np.array([[3, 0], [0, 2], [1, 1]], dtype=float)  # their stars for two answers


def test_propagation_hand_computed():
    queries = np.array([[0.6, 0.8, 0.0]])
    # sims 0.6, 0.8, 0; top 2: rows 1 and 0; weights 0.8^2, 0.6^2.
    scores = propagation_scores(queries, TRAIN, GAINS, top_n=2, power=2.0)
    assert scores == pytest.approx(np.array([[0.36 * 3, 0.64 * 2]]))
    # power 1, top 1: only row 1 (0.8).
    assert propagation_scores(queries, TRAIN, GAINS, top_n=1, power=1.0) == pytest.approx(
        np.array([[0.0, 1.6]])
    )


def test_a_training_question_never_sees_its_own_labels():
    # Query 0 is training question 0 itself: its own labels are left out, the rest are orthogonal.
    scores = propagation_scores(TRAIN[:1], TRAIN, GAINS, exclude=[0], top_n=3)
    assert scores.tolist() == [[0.0, 0.0]]
    without = propagation_scores(TRAIN[:1], TRAIN, GAINS, top_n=3)
    assert without.tolist() == [[3.0, 0.0]]


def test_negative_similarity_counts_zero_and_sparse_gains_accepted():
    queries = np.array([[-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]])
    scores = propagation_scores(queries, TRAIN, sparse.csr_matrix(GAINS), exclude=[-1, 2], top_n=3)
    assert scores.tolist() == [[0.0, 0.0], [0.0, 0.0]]


def test_neighbour_weights_ties_go_to_the_lower_row():
    weights = neighbour_weights(np.array([[1.0, 1.0, 0.0]]) / np.sqrt(2), TRAIN, top_n=1, power=1.0)
    assert weights.toarray() == pytest.approx(np.array([[np.sqrt(0.5), 0.0, 0.0]]))


def test_no_training_questions():
    assert propagation_scores(np.ones((2, 3)), np.zeros((0, 3)), np.zeros((0, 4))).shape == (2, 4)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"top_n": 0},
        {"power": 0.0},
        {"exclude": [5]},
        {"exclude": [0, 1]},
        {"train_gains": np.ones((2, 2))},
        {"train_gains": -np.ones((3, 2))},
        {"query_embeddings": np.ones((1, 2))},
        {"query_embeddings": np.array([[np.nan, 0, 0]])},
    ],
)
def test_bad_input(kwargs):
    args = {"query_embeddings": np.array([[1.0, 0.0, 0.0]]), "train_embeddings": TRAIN, "train_gains": GAINS}
    args |= kwargs
    with pytest.raises(ValueError):
        propagation_scores(
            args.pop("query_embeddings"), args.pop("train_embeddings"), args.pop("train_gains"), **args
        )
