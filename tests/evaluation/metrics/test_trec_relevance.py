"""Ranking, label lookup and duplicate checks (:mod:`evaluation.metrics.trec.relevance`)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from evaluation.metrics.trec import docs, engine, files, score_files
from evaluation.metrics.trec.docs import TrecFormatError, qrels_from_arrays, run_from_arrays
from evaluation.metrics.trec.engine import evaluate
from tests.evaluation.metrics.trec_helpers import ALL_OURS, DATA, expected_lines, reference, write


def test_evaluate_ties_broken_by_docno_descending_bytes(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 B 1\n")
    # equal scores: "b" > "B" > "A" in byte order, so the ranking is b, B, A and B is at rank 2
    run = write(tmp_path, "run", "q Q0 A 1 0.5 t\nq Q0 B 2 0.5 t\nq Q0 b 3 0.5 t\n")
    lines = score_files(qrels, run, ["success.1,2", "ndcg_cut.3"])
    assert lines == [
        "ndcg_cut_3            \tall\t0.6309",
        "success_1             \tall\t0.0000",
        "success_2             \tall\t1.0000",
    ]


def test_evaluate_many_ties_around_cutoff_long_shared_prefix_docnos():
    rng = random.Random(3)
    qids, docnos, scores = [], [], []
    for q in range(40):
        for d in range(60):
            qids.append(f"q{q}")
            docnos.append(f"document-with-a-long-shared-prefix-{rng.randrange(10**6):07d}-{d}")
            scores.append(rng.choice([0.0, 0.5, 1.0]))
    labels = {(q, d): rng.randrange(-1, 4) for q, d in zip(qids, docnos, strict=True) if rng.random() < 0.4}
    run = run_from_arrays(qids, docnos, scores)
    qrels = qrels_from_arrays([k[0] for k in labels], [k[1] for k in labels], list(labels.values()))
    got = evaluate(qrels, run, ["ndcg_cut.5,10,100", "success.1,3", "P.7", "recall.9"], relevance_level=2)
    want = reference(qids, docnos, scores, labels, level=2)
    for name, values in want.items():
        assert got.values[name] == pytest.approx(values, abs=1e-12), name


def test_evaluate_hash_collisions_still_exact(monkeypatch, tmp_path):
    # a terrible hash (4 values): every lookup collides, the byte-for-byte check must sort it out
    def terrible_hash(words):
        return (words[:, 0] & np.uint64(3)) + np.uint64(1)

    for module in (docs, files, engine):  # every module that hashes docnos
        monkeypatch.setattr(module, "hash_words", terrible_hash)
    got = score_files(DATA / "qrels.test", DATA / "results.test", ALL_OURS, per_query=True)
    assert got == expected_lines("out.test.aq")
    rng = random.Random(5)
    qids = [str(q) for q in range(6) for _ in range(20)]
    docnos = [f"d{rng.randrange(10**6)}" for _ in qids]
    scores = [rng.choice([0.0, 1.0, 2.0]) for _ in qids]
    labels = {(q, d): rng.randrange(0, 4) for q, d in zip(qids, docnos, strict=True)}
    run = run_from_arrays(qids, docnos, scores)
    qrels = qrels_from_arrays([k[0] for k in labels], [k[1] for k in labels], list(labels.values()))
    result = evaluate(qrels, run, ["ndcg_cut.5,10,100", "success.1,3", "P.7", "recall.9"])
    for name, values in reference(qids, docnos, scores, labels).items():
        assert result.values[name] == pytest.approx(values, abs=1e-12), name


def test_evaluate_negative_grade_is_pooled_but_unjudged(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 a -1\nq 0 b 1\n")
    run = write(tmp_path, "run", "q Q0 a 1 2 t\nq Q0 c 2 1 t\n")
    # -l -1: unjudged (-2) is not relevant, not-in-pool (-1) is
    assert score_files(qrels, run, ["success.1,2"], relevance_level=-1) == [
        "success_1             \tall\t0.0000",
        "success_2             \tall\t1.0000",
    ]


def test_evaluate_duplicate_document_in_run_raises(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 a 1\n")
    run = write(tmp_path, "run", "q Q0 a 1 1 t\nq Q0 a 2 0.5 t\n")
    with pytest.raises(TrecFormatError, match="query q lists document a more than once"):
        score_files(qrels, run)


def test_evaluate_duplicate_judgement_raises(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 a 1\nq 0 a 2\n")
    run = write(tmp_path, "run", "q Q0 a 1 1 t\n")
    with pytest.raises(TrecFormatError, match="more than once"):
        score_files(qrels, run)
