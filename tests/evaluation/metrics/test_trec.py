"""The :mod:`evaluation.metrics.trec` façade: ``score_files`` line for line against trec_eval's own test outputs."""

from __future__ import annotations

import pytest

from evaluation.metrics.trec import evaluate, read_qrels, read_run, score_files
from tests.evaluation.metrics.trec_helpers import ALL_OURS, DATA, expected_lines


def test_score_files_matches_trec_eval_out_test_aq():
    got = score_files(DATA / "qrels.test", DATA / "results.test", ALL_OURS, per_query=True)
    assert got == expected_lines("out.test.aq")


def test_score_files_complete_matches_trec_eval_out_test_aqc():
    got = score_files(DATA / "qrels.test", DATA / "results.trunc", ALL_OURS, per_query=True, complete=True)
    assert got == expected_lines("out.test.aqc")


def test_score_files_relevance_level_matches_trec_eval_out_test_aql():
    got = score_files(
        DATA / "qrels.rel_level", DATA / "results.test", ALL_OURS, per_query=True, relevance_level=2
    )
    assert got == expected_lines("out.test.aql")


def test_score_files_measure_params_matches_trec_eval_out_test_meas_params():
    measures = ["ndcg_cut.10,20,23.4", "success.2,5,20", "P.3,5,7", "recall.20,2000"]
    got = score_files(DATA / "qrels.test", DATA / "results.test", measures, per_query=True)
    assert got == expected_lines("out.test.meas_params")
    assert "ndcg_cut_23           \tall\t0.3429" in got  # 23.4 is read as 23, like C's atol


def test_score_files_missing_query_skipped_without_complete():
    got = score_files(DATA / "qrels.test", DATA / "results.trunc", ["num_q", "ndcg_cut.10"], per_query=True)
    assert [line.split("\t")[1] for line in got] == ["301", "303", "all", "all"]
    assert got[2] == "num_q                 \tall\t2"
    values = evaluate(read_qrels(DATA / "qrels.test"), read_run(DATA / "results.trunc"), ["ndcg_cut.10"])
    assert values.mean("ndcg_cut_10") == pytest.approx(values.values["ndcg_cut_10"].mean())
