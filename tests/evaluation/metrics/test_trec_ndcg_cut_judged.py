"""``ndcg_cut_judged`` (:mod:`evaluation.metrics.trec`) equals ``trec_eval -J -m ndcg_cut``: line for line
on trec_eval's test files (``out.test.J*``, made by trec_eval 10 itself, see ``SOURCE.md``), against
pytrec_eval's ``judged_docs_only_flag=True`` on random runs, and on hand-computed values."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics.trec import evaluate, score_files
from evaluation.metrics.trec.docs import qrels_from_arrays, run_from_arrays
from tests.evaluation.metrics.trec_helpers import DATA

pytrec_eval = pytest.importorskip("pytrec_eval")


def judged_lines(name: str) -> list[str]:
    """trec_eval's ``-J`` output of ``ndcg_cut`` under our name for it, ``ndcg_cut_judged``."""
    lines = []
    for line in (DATA / name).open():
        measure, qid, value = line.rstrip("\n").split("\t")
        judged = measure.strip().replace("ndcg_cut_", "ndcg_cut_judged_", 1)
        lines.append(f"{judged:<22}\t{qid}\t{value}")
    return lines


def test_ndcg_cut_judged_matches_trec_eval_J_out_test_j():
    got = score_files(DATA / "qrels.test", DATA / "results.test", ["ndcg_cut_judged"], per_query=True)
    assert got == judged_lines("out.test.J")
    assert "ndcg_cut_judged_10    \tall\t0.3016" in got


def test_ndcg_cut_judged_complete_matches_trec_eval_J_out_test_jc():
    got = score_files(
        DATA / "qrels.test", DATA / "results.trunc", ["ndcg_cut_judged"], per_query=True, complete=True
    )
    assert got == judged_lines("out.test.Jc")


def test_ndcg_cut_judged_graded_qrels_match_trec_eval_J_out_test_jl():
    # grades -1..4: a negative grade is not judged either; -l plays no part
    for level in (1, 2):
        got = score_files(
            DATA / "qrels.rel_level",
            DATA / "results.test",
            ["ndcg_cut_judged"],
            per_query=True,
            relevance_level=level,
        )
        assert got == judged_lines("out.test.Jl")


def test_ndcg_cut_judged_beside_other_measures_leaves_them_unchanged():
    qrels, run = DATA / "qrels.rel_level", DATA / "results.test"
    alone = score_files(qrels, run, ["ndcg_cut.10", "success.5", "P.5"], per_query=True)
    both = score_files(qrels, run, ["ndcg_cut.10", "ndcg_cut_judged.10", "success.5", "P.5"], per_query=True)
    assert [line for line in both if not line.startswith("ndcg_cut_judged_")] == alone
    assert [line for line in both if line.startswith("ndcg_cut_judged_")] == [
        line for line in judged_lines("out.test.Jl") if line.startswith("ndcg_cut_judged_10 ")
    ]
    assert "ndcg_cut_10           \t303\t0.0000" in both  # an unjudged document at ranks 1-10
    assert "ndcg_cut_judged_10    \t303\t0.0731" in both


def test_ndcg_cut_judged_matches_pytrec_eval_judged_docs_only_on_trec_eval_files():
    qrels: dict[str, dict[str, int]] = {}
    for line in (DATA / "qrels.rel_level").open():
        qid, _, doc, grade = line.split()
        qrels.setdefault(qid, {})[doc] = int(grade)
    run: dict[str, dict[str, float]] = {}
    for line in (DATA / "results.test").open():
        qid, _, doc, _, score, _ = line.split()
        run.setdefault(qid, {})[doc] = float(score)
    want = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}, judged_docs_only_flag=True).evaluate(run)
    got = score_files(DATA / "qrels.rel_level", DATA / "results.test", ["ndcg_cut_judged.10"], per_query=True)
    per_query = {line.split("\t")[1]: float(line.split("\t")[2]) for line in got[:-1]}
    assert per_query == {q: pytest.approx(v["ndcg_cut_10"], abs=5e-5) for q, v in want.items()}


def test_ndcg_cut_judged_unjudged_documents_removed_hand_computed():
    # ranked d1..d5 (scores 5..1); qrels: d2 = 0, d4 = 2, d5 = 1, x = 3 (not retrieved), d3 = -1
    # condensed: d2 (0), d4 (2), d5 (1) at ranks 1, 2, 3
    run = run_from_arrays(["q"] * 5, ["d1", "d2", "d3", "d4", "d5"], [5, 4, 3, 2, 1])
    qrels = qrels_from_arrays(["q"] * 5, ["d2", "d4", "d5", "x", "d3"], [0, 2, 1, 3, -1])
    got = evaluate(qrels, run, ["ndcg_cut_judged.2,10", "ndcg_cut.10"])
    dcg2 = 2 / math.log2(3)
    dcg10 = dcg2 + 1 / math.log2(4)
    idcg2 = 3 + 2 / math.log2(3)
    idcg10 = idcg2 + 1 / math.log2(4)
    assert got.values["ndcg_cut_judged_2"][0] == pytest.approx(dcg2 / idcg2, abs=1e-12)
    assert got.values["ndcg_cut_judged_10"][0] == pytest.approx(dcg10 / idcg10, abs=1e-12)
    # plain ndcg_cut: d4 at rank 4, d5 at rank 5
    plain = 2 / math.log2(5) + 1 / math.log2(6)
    assert got.values["ndcg_cut_10"][0] == pytest.approx(plain / idcg10, abs=1e-12)


def test_ndcg_cut_judged_query_without_judged_retrieved_scores_zero():
    run = run_from_arrays(["q", "q", "r"], ["a", "b", "c"], [2, 1, 1])
    qrels = qrels_from_arrays(["q", "r"], ["x", "c"], [3, 0])
    got = evaluate(qrels, run, ["num_q", "ndcg_cut_judged.10"])
    assert got.qids == ["q", "r"]
    assert got.values["ndcg_cut_judged_10"].tolist() == [0.0, 0.0]  # nothing judged retrieved; no relevant
    assert got.mean("ndcg_cut_judged_10") == 0.0


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_ndcg_cut_judged_random_runs_equal_pytrec_eval(seed):
    rng = random.Random(seed)
    qids, docnos, scores = [], [], []
    for q in range(rng.randrange(1, 6)):
        for d in rng.sample(range(40), rng.randrange(1, 35)):
            qids.append(str(q))
            docnos.append(f"d{d}")
            scores.append(rng.choice([0.5, -1.0, float(rng.randrange(6))]))
    labels: dict[tuple[str, str], int] = {}
    for q in range(rng.randrange(1, 7)):
        # the first grade >= 0: trec_eval refuses a query whose grades are all negative (pytrec_eval crashes)
        for i, d in enumerate(rng.sample(range(40), rng.randrange(1, 15))):
            labels[(str(q), f"d{d}")] = rng.randrange(0 if i == 0 else -2, 4)
    run = run_from_arrays(qids, docnos, scores)
    qrels = qrels_from_arrays([k[0] for k in labels], [k[1] for k in labels], list(labels.values()))
    qrels_dict: dict[str, dict[str, int]] = {}
    for (q, d), g in labels.items():
        qrels_dict.setdefault(q, {})[d] = g
    run_dict: dict[str, dict[str, float]] = {}
    for q, d, s in zip(qids, docnos, scores, strict=True):
        run_dict.setdefault(q, {})[d] = s
    want = pytrec_eval.RelevanceEvaluator(qrels_dict, {"ndcg_cut.3,10"}, judged_docs_only_flag=True).evaluate(
        run_dict
    )
    if not want:
        with pytest.raises(ValueError, match="No queries"):
            evaluate(qrels, run, ["ndcg_cut_judged.3,10"])
        return
    got = evaluate(qrels, run, ["ndcg_cut_judged.3,10"])
    assert got.qids == sorted(want, key=str.encode)
    for k in (3, 10):
        expected = [want[q][f"ndcg_cut_{k}"] for q in got.qids]
        assert got.values[f"ndcg_cut_judged_{k}"] == pytest.approx(expected, abs=1e-12), k
