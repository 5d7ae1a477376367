"""Property tests (hypothesis) of DCG / NDCG."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import dcg_at_k, ndcg_at_k

GAINS = st.sampled_from(["linear", "exponential"])
DISCOUNTS = st.sampled_from(["log2", "jarvelin_kekalainen"])
LABEL = st.one_of(st.none(), st.integers(min_value=-1, max_value=3), st.floats(0, 4, allow_nan=False))
RANKING = st.lists(LABEL, min_size=1, max_size=12)


def _labels(values: list[float | None]) -> np.ndarray:
    return np.array([math.nan if v is None else v for v in values], dtype=float)


@settings(max_examples=200, deadline=None)
@given(RANKING, st.lists(LABEL, max_size=6), st.integers(1, 15), GAINS, DISCOUNTS)
def test_ndcg_at_k_any_ranking_is_between_0_and_1(ranking, unretrieved, k, gain, discount):
    retrieved = _labels(ranking)
    ideal = np.concatenate([retrieved, _labels(unretrieved)])
    value = ndcg_at_k(retrieved, ideal, k, gain=gain, discount=discount)[0]
    assert math.isnan(value) or -1e-12 <= value <= 1 + 1e-12


@settings(max_examples=200, deadline=None)
@given(RANKING, st.integers(1, 15), GAINS, DISCOUNTS)
def test_ndcg_at_k_ideal_order_scores_one(ranking, k, gain, discount):
    labels = _labels(ranking)
    ideal_order = np.sort(np.nan_to_num(labels, nan=-np.inf))[::-1]
    ideal_order[np.isneginf(ideal_order)] = np.nan
    value = ndcg_at_k(ideal_order, labels, k, gain=gain, discount=discount)[0]
    if not math.isnan(value):
        assert math.isclose(value, 1.0, abs_tol=1e-12)
    else:
        assert not (np.nan_to_num(labels) > 0).any()


@settings(max_examples=200, deadline=None)
@given(RANKING, st.integers(1, 15), st.data(), GAINS, DISCOUNTS)
def test_dcg_at_k_moving_higher_label_up_never_lowers(ranking, k, data, gain, discount):
    labels = _labels(ranking)
    i = data.draw(st.integers(0, labels.size - 1))
    j = data.draw(st.integers(0, labels.size - 1))
    upper, lower = min(i, j), max(i, j)
    hi, lo = np.nan_to_num(labels[[upper, lower]], nan=-np.inf)
    if hi >= lo:
        return
    swapped = labels.copy()
    swapped[[upper, lower]] = labels[[lower, upper]]  # the higher label moves above the lower one
    before = dcg_at_k(labels, k, gain=gain, discount=discount)[0]
    after = dcg_at_k(swapped, k, gain=gain, discount=discount)[0]
    assert after >= before - 1e-12


@settings(max_examples=200, deadline=None)
@given(RANKING, RANKING, st.integers(1, 12), GAINS, DISCOUNTS)
def test_dcg_at_k_answers_below_k_never_matter(ranking, tail, k, gain, discount):
    head = _labels(ranking)[:k]
    padded = np.concatenate([head, np.full(k - head.size, np.nan)])
    extended = np.concatenate([padded, _labels(tail)])
    assert (
        dcg_at_k(padded, k, gain=gain, discount=discount)[0]
        == dcg_at_k(extended, k, gain=gain, discount=discount)[0]
    )


@settings(max_examples=100, deadline=None)
@given(st.lists(RANKING, min_size=1, max_size=5), st.integers(1, 15))
def test_dcg_at_k_vectorised_equals_one_question_at_a_time(rankings, k):
    depth = max(len(r) for r in rankings)
    matrix = np.full((len(rankings), depth), np.nan)
    for q, ranking in enumerate(rankings):
        matrix[q, : len(ranking)] = _labels(ranking)
    together = dcg_at_k(matrix, k)
    for q, ranking in enumerate(rankings):
        assert together[q] == dcg_at_k(_labels(ranking), k)[0]
