"""Evaluation against a reference implementation; threads and chunks (:mod:`evaluation.metrics.trec.evaluate`)."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics.trec import relevance, score_files
from evaluation.metrics.trec.docs import qrels_from_arrays, run_from_arrays
from evaluation.metrics.trec.engine import evaluate
from evaluation.metrics.trec.files import read_qrels, read_run
from tests.evaluation.metrics.trec_helpers import DATA, reference, write


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.booleans(), st.integers(-1, 3))
def test_evaluate_random_runs_equal_reference(seed, complete, level):
    rng = random.Random(seed)
    qids, docnos, scores = [], [], []
    for q in range(rng.randrange(1, 8)):
        for d in rng.sample(range(30), rng.randrange(1, 25)):
            qids.append(str(q))
            docnos.append(f"d{d}" * rng.choice([1, 3]))
            scores.append(rng.choice([0.25, 0.5, -1.0, float(rng.randrange(5))]))
    labels = {}
    for q in range(rng.randrange(1, 9)):
        for d in rng.sample(range(30), rng.randrange(1, 12)):
            labels[(str(q), f"d{d}" * rng.choice([1, 3]))] = rng.randrange(-2, 4)
    run = run_from_arrays(qids, docnos, scores)
    qrels = qrels_from_arrays([k[0] for k in labels], [k[1] for k in labels], list(labels.values()))
    want = reference(qids, docnos, scores, labels, level, complete)
    if not want["P_7"]:
        with pytest.raises(ValueError, match="No queries"):
            evaluate(qrels, run, ["P.7"], complete=complete)
        return
    got = evaluate(
        qrels,
        run,
        ["ndcg_cut.5,10,100", "success.1,3", "P.7", "recall.9"],
        relevance_level=level,
        complete=complete,
    )
    for name, values in want.items():
        assert got.values[name] == pytest.approx(values, abs=1e-12), name


def test_evaluate_threads_give_the_same_values():
    qrels, run = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test", threads=3)
    one = evaluate(qrels, run, ["ndcg_cut", "success"], threads=1)
    many = evaluate(qrels, run, ["ndcg_cut", "success"], threads=4)
    for name, values in one.values.items():
        assert np.array_equal(values, many.values[name]), name


def test_evaluate_small_chunks_give_the_same_values(monkeypatch):
    qrels, run = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test")
    whole = evaluate(qrels, run, ["ndcg_cut", "success"])
    monkeypatch.setattr(relevance, "_CELL_BUDGET", 10)
    chunked = evaluate(qrels, run, ["ndcg_cut", "success"])
    for name, values in whole.values.items():
        assert np.array_equal(values, chunked.values[name]), name


def test_evaluate_no_common_query_raises(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 a 1\n")
    run = write(tmp_path, "run", "other Q0 a 1 1 t\n")
    with pytest.raises(ValueError, match="No queries with both results and relevance info"):
        score_files(qrels, run)
