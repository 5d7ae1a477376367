"""rankers.rm3: term-frequency rows, the RM3 expansion and the weighted BM25 rescoring, by hand."""

import numpy as np
import pytest
from scipy import sparse

from rankers.rm3 import rm3_expand, rm3_scores, term_frequency_matrix, weighted_bm25

# Three answers over a 5-term vocabulary: [0, 1, 1], [2, 3], [0, 4, 0, 1].
OFFSETS = np.array([0, 3, 5, 9])
FLAT = np.array([0, 1, 1, 2, 3, 0, 4, 0, 1])


def test_term_frequency_matrix():
    tf = term_frequency_matrix(OFFSETS, FLAT, [0, 1, 2], 5)
    assert tf.toarray().tolist() == [[1, 2, 0, 0, 0], [0, 0, 1, 1, 0], [2, 1, 0, 0, 1]]
    assert term_frequency_matrix(OFFSETS, FLAT, [2, 0], 5).toarray().tolist() == [
        [2, 1, 0, 0, 1],
        [1, 2, 0, 0, 0],
    ]
    assert term_frequency_matrix(OFFSETS, FLAT, [], 5).shape == (0, 5)


@pytest.mark.parametrize(
    "offsets, flat, rows, size",
    [
        ([1, 3], [0, 1, 2], [0], 5),  # does not start at 0
        ([0, 2], [0, 1, 2], [0], 5),  # does not end at len(flat)
        (OFFSETS, FLAT, [3], 5),  # no such answer
        (OFFSETS, FLAT, [0], 4),  # term id 4 outside the vocabulary
    ],
)
def test_term_frequency_matrix_bad_input(offsets, flat, rows, size):
    with pytest.raises(ValueError):
        term_frequency_matrix(offsets, flat, rows, size)


def test_rm3_expand_hand_computed():
    tf = term_frequency_matrix(OFFSETS, FLAT, [0, 1], 5)
    # P(d|Q) = 2/3, 1/3.  P_RM1: t0 = 2/3 * 1/3 = 2/9, t1 = 2/3 * 2/3 = 4/9, t2 = t3 = 1/3 * 1/2 = 1/6.
    # Top 2 terms (t1, t0) renormalised: t0 = 1/3, t1 = 2/3.  Query [0, 1]: P(w|Q) = 1/2 each.
    expanded = rm3_expand([0, 1], tf, [2.0, 1.0], fb_terms=2, original_weight=0.5)
    assert expanded.terms.tolist() == [0, 1]
    assert expanded.weights.tolist() == pytest.approx([0.5 * 0.5 + 0.5 / 3, 0.5 * 0.5 + 0.5 * 2 / 3])
    # With 3 terms, t2 and t3 tie at 1/6: the lower id (t2) is kept.
    three = rm3_expand([0, 1], tf, [2.0, 1.0], fb_terms=3, original_weight=0.0).as_dict()
    total = 2 / 9 + 4 / 9 + 1 / 6
    assert three == pytest.approx({0: 2 / 9 / total, 1: 4 / 9 / total, 2: 1 / 6 / total})


def test_rm3_expand_without_feedback_is_the_query():
    tf = term_frequency_matrix(OFFSETS, FLAT, [0], 5)
    assert rm3_expand([3, 3, 1], tf[:0], []).as_dict() == pytest.approx({1: 1 / 3, 3: 2 / 3})
    assert rm3_expand([3, 1], tf, [1.0], original_weight=1.0).as_dict() == pytest.approx({1: 0.5, 3: 0.5})
    # All feedback scores 0: the feedback answers are weighted uniformly.
    assert rm3_expand([], tf, [0.0], original_weight=0.0).as_dict() == pytest.approx({0: 1 / 3, 1: 2 / 3})


def test_rm3_scores_hand_computed():
    tf = term_frequency_matrix(OFFSETS, FLAT, [0, 1, 2], 5)
    scores = rm3_scores([0, 1], tf, tf[:2], [2.0, 1.0], np.ones(5), 3.0, fb_terms=2, original_weight=0.5)
    w0, w1 = 5 / 12, 7 / 12
    # |a| = 3, 2, 4; avgdl 3; k1 1.2, b 0.75: the length norms are 1.2, 0.9 and 1.5.
    expected = [w0 * 1 / (1 + 1.2) + w1 * 2 / (2 + 1.2), 0.0, w0 * 2 / (2 + 1.5) + w1 * 1 / (1 + 1.5)]
    assert scores.tolist() == pytest.approx(expected)


def test_weighted_bm25_uses_idf_and_given_lengths():
    tf = sparse.csr_matrix(np.array([[1.0, 0.0], [3.0, 1.0]]))
    scores = weighted_bm25({0: 2.0}, tf, [0.5, 9.0], 2.0, lengths=[2.0, 2.0], k1=1.0, b=0.0)
    assert scores.tolist() == pytest.approx([2.0 * 0.5 * 1 / 2, 2.0 * 0.5 * 3 / 4])


@pytest.mark.parametrize(
    "kwargs",
    [
        {"fb_terms": -1},
        {"original_weight": 1.5},
        {"feedback_scores": [-1.0, 1.0]},
        {"feedback_scores": [1.0]},
        {"query_terms": [7]},
    ],
)
def test_rm3_expand_bad_input(kwargs):
    tf = term_frequency_matrix(OFFSETS, FLAT, [0, 1], 5)
    args = {"query_terms": [0], "feedback_tf": tf, "feedback_scores": [1.0, 1.0]} | kwargs
    with pytest.raises(ValueError):
        rm3_expand(args.pop("query_terms"), args.pop("feedback_tf"), args.pop("feedback_scores"), **args)


def test_weighted_bm25_bad_input():
    tf = term_frequency_matrix(OFFSETS, FLAT, [0], 5)
    with pytest.raises(ValueError):
        weighted_bm25({0: 1.0}, tf.toarray(), np.ones(5), 3.0)  # dense, not sparse
    with pytest.raises(ValueError):
        weighted_bm25({0: 1.0}, tf, np.ones(4), 3.0)
    with pytest.raises(ValueError):
        weighted_bm25({0: 1.0}, tf, np.ones(5), 0.0)
    with pytest.raises(ValueError):
        weighted_bm25({9: 1.0}, tf, np.ones(5), 3.0)
