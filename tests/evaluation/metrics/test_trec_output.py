"""trec_eval's output lines (:mod:`evaluation.metrics.trec.output`)."""

from __future__ import annotations

from evaluation.metrics.trec.engine import evaluate
from evaluation.metrics.trec.files import read_qrels, read_run
from evaluation.metrics.trec.output import format_evaluation
from tests.evaluation.metrics.trec_helpers import DATA


def test_format_evaluation_summary_only_by_default():
    result = evaluate(read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test"), ["ndcg_cut.10"])
    assert format_evaluation(result) == ["ndcg_cut_10           \tall\t0.3016"]
