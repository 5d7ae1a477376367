"""Judged-only NDCG@k from in-memory arrays (:func:`evaluation.metrics.judged_ndcg_at_k`): hand-computed
values, the options, undefined questions, bad input, and agreement with ``ndcg_cut_judged`` of the trec
engine (``trec_eval -J``)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import condensed, judged_ndcg_at_k, ndcg_at_k
from evaluation.metrics.trec import evaluate
from evaluation.metrics.trec.docs import qrels_from_arrays, run_from_arrays

NAN = math.nan
LOG3 = math.log2(3)


def test_judged_ndcg_at_k_unrated_removed_before_ranking():
    # condensed ranking: 0, 3 -> DCG = 3 / log2(3), IDCG = 3
    value = judged_ndcg_at_k([4, 3, 2, 1], [NAN, 0, NAN, 3], 10)
    assert value.tolist() == pytest.approx([1 / LOG3], abs=1e-15)
    # plain NDCG reads the unrated answers as 0 and leaves the 3 at rank 4
    assert ndcg_at_k([NAN, 0, NAN, 3], [0, 3], 10)[0] == pytest.approx(1 / math.log2(5), abs=1e-15)


def test_judged_ndcg_at_k_ranks_by_score_not_input_order():
    # by score: 0 (3.0), 2 (2.0), 3 (1.0)
    value = judged_ndcg_at_k([1.0, 3.0, 2.0], [3, 0, 2], 10)[0]
    assert value == pytest.approx((2 / LOG3 + 3 / 2) / (3 + 2 / LOG3), abs=1e-15)


def test_judged_ndcg_at_k_cutoff_counts_judged_ranks_only():
    # the two rated answers are at ranks 2 and 5, but at judged ranks 1 and 2: both inside k = 2
    value = judged_ndcg_at_k([5, 4, 3, 2, 1], [NAN, 1, NAN, NAN, 2], 2)[0]
    assert value == pytest.approx((1 + 2 / LOG3) / (2 + 1 / LOG3), abs=1e-15)


def test_judged_ndcg_at_k_ties_keep_input_order():
    assert judged_ndcg_at_k([1, 1], [0, 3], 10)[0] == pytest.approx(1 / LOG3, abs=1e-15)
    assert judged_ndcg_at_k([1, 1], [3, 0], 10)[0] == 1.0


def test_judged_ndcg_at_k_ideal_from_all_known_labels():
    # known labels 3, 2, 1; only the 1 is a candidate (rated), at judged rank 1
    value = judged_ndcg_at_k([2, 1], [NAN, 1], 10, ideal=[3, 2, 1])[0]
    assert value == pytest.approx(1 / (3 + 2 / LOG3 + 1 / 2), abs=1e-15)


def test_judged_ndcg_at_k_all_unrated_with_known_relevant_is_zero():
    assert judged_ndcg_at_k([2, 1], [NAN, NAN], 10, ideal=[2]).tolist() == [0.0]


def test_judged_ndcg_at_k_no_positive_known_label_is_nan():
    values = judged_ndcg_at_k([[2, 1], [2, 1], [2, 1]], [[0, NAN], [NAN, NAN], [0, 0]], 10)
    assert np.isnan(values).all()


def test_judged_ndcg_at_k_negative_label_is_unknown():
    # as trec_eval -J drops a negative grade: the 2 moves up to judged rank 1
    assert judged_ndcg_at_k([2, 1], [-1, 2], 10).tolist() == [1.0]


def test_judged_ndcg_at_k_several_questions_with_padding():
    scores = [[3, 2, 1], [1, 2, NAN]]
    labels = [[NAN, 1, 2], [2, 0, NAN]]  # question 2 has two candidates; its third cell is padding
    values = judged_ndcg_at_k(scores, labels, 10)
    assert values.tolist() == pytest.approx([(1 + 2 / LOG3) / (2 + 1 / LOG3), (2 / LOG3) / 2], abs=1e-15)


def test_judged_ndcg_at_k_exponential_gain_and_jarvelin_kekalainen_discount():
    # condensed 1, 3: gains 1, 7; ideal 7, 1
    exp = judged_ndcg_at_k([3, 2, 1], [NAN, 1, 3], 10, gain="exponential")[0]
    assert exp == pytest.approx((1 + 7 / LOG3) / (7 + 1 / LOG3), abs=1e-15)
    # d(1) = d(2) = 1: both orders give 8
    jk = judged_ndcg_at_k([3, 2, 1], [NAN, 1, 3], 10, gain="exponential", discount="jarvelin_kekalainen")
    assert jk.tolist() == [1.0]


def test_judged_ndcg_at_k_bad_input_raises():
    with pytest.raises(ValueError, match="shape"):
        judged_ndcg_at_k([1, 2, 3], [1, 2], 10)
    with pytest.raises(ValueError, match="finite"):
        judged_ndcg_at_k([NAN, 1], [2, 1], 10)
    with pytest.raises(ValueError, match="positive integer"):
        judged_ndcg_at_k([1], [1], 0)


def test_condensed_keeps_judged_in_rank_order():
    out = condensed([[NAN, 2, -1, 0, 3], [1, NAN, NAN, NAN, NAN]], depth=4)
    assert np.array_equal(out, [[2, 0, 3, NAN], [1, NAN, NAN, NAN]], equal_nan=True)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([1, 3, 10]))
def test_judged_ndcg_at_k_equals_trec_engine_ndcg_cut_judged(seed, k):
    rng = random.Random(seed)
    qids, docnos, run_scores, q_ids, q_docs, grades = [], [], [], [], [], []
    scores, labels, ideal = [], [], []
    for q in range(rng.randrange(1, 6)):
        docs = rng.sample(range(30), rng.randrange(1, 20))
        known = {d: rng.randrange(0, 4) for d in rng.sample(range(30), rng.randrange(1, 12))}
        row_scores = rng.sample(range(1000), len(docs))  # distinct: no tie-break to agree on
        for d, s in zip(docs, row_scores, strict=True):
            qids.append(str(q))
            docnos.append(f"d{d}")
            run_scores.append(float(s))
        for d, g in known.items():
            q_ids.append(str(q))
            q_docs.append(f"d{d}")
            grades.append(g)
        scores.append([float(s) for s in row_scores] + [NAN] * (20 - len(docs)))
        labels.append([float(known.get(d, NAN)) for d in docs] + [NAN] * (20 - len(docs)))
        ideal.append([float(g) for g in known.values()] + [NAN] * (12 - len(known)))
    got = judged_ndcg_at_k(scores, labels, k, ideal=ideal)
    trec = evaluate(
        qrels_from_arrays(q_ids, q_docs, grades),
        run_from_arrays(qids, docnos, run_scores),
        [f"ndcg_cut_judged.{k}"],
    )
    order = np.argsort([int(q) for q in trec.qids])  # trec orders query ids as bytes
    assert np.nan_to_num(got) == pytest.approx(trec.values[f"ndcg_cut_judged_{k}"][order], abs=1e-12)
