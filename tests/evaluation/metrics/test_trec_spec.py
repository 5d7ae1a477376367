"""trec_eval's ``-m`` syntax (:mod:`evaluation.metrics.trec.spec`)."""

from __future__ import annotations

import pytest

from evaluation.metrics.trec.spec import parse_measures


def test_parse_measures_trec_eval_order_and_defaults():
    measures = parse_measures(["success.5", "ndcg_cut", "num_q"])
    assert [m.name for m in measures] == ["num_q", "ndcg_cut", "success"]
    assert measures[1].cutoffs == (5, 10, 15, 20, 30, 100, 200, 500, 1000)
    assert measures[2].cutoffs == (5,)


def test_parse_measures_first_parameters_win_and_sorted():
    assert parse_measures(["ndcg_cut.20,10", "ndcg_cut.5"])[0].cutoffs == (10, 20)
    assert parse_measures(["ndcg_cut", "ndcg_cut.7"])[0].cutoffs == (7,)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("map", "unknown measure"),
        ("ndcg_cut.", "improper"),
        ("success.0", "positive"),
        ("P.5,5.5", "duplicate"),
    ],
)
def test_parse_measures_bad_spec_raises(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_measures([spec])
