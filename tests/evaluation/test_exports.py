"""The run file writers: exact TREC run lines, CSV and JSONL rows."""

import io
import json

import pytest

from evaluation.exports import (
    ResultRow,
    write_results_csv,
    write_results_jsonl,
    write_run_export,
    write_trec_run,
)

ROWS = [
    ResultRow(
        "q1",
        "boundary layer, flat plate",
        "test",
        ["a1", "a5", "a9"],
        [3, 2, None],
        0.9,
        4.5,
        5.0,
        True,
        2 / 3,
        1,
        "",
    ),
    ResultRow(
        "q2", "helicopter noise", "test", [], [], None, None, None, None, None, 0, "ranker answered 500"
    ),
]


def test_write_trec_run_scores_fall_with_rank_and_failed_questions_are_left_out():
    out = io.StringIO()

    write_trec_run(ROWS, out, tag="run-7")

    assert out.getvalue() == "q1 Q0 a1 1 3 run-7\nq1 Q0 a5 2 2 run-7\nq1 Q0 a9 3 1 run-7\n"


def test_write_results_csv_rows():
    out = io.StringIO()

    write_results_csv(ROWS, out)

    assert out.getvalue().splitlines() == [
        "question_id,question,split,ndcg,dcg,ideal_dcg,accuracy_hit,judged,unlabelled_in_top_k,ranked_answer_ids,labels,error",
        'q1,"boundary layer, flat plate",test,0.9,4.5,5.0,1,0.6666666666666666,1,a1 a5 a9,3 2 -,',
        "q2,helicopter noise,test,,,,,,0,,,ranker answered 500",
    ]


def test_write_results_jsonl_rows():
    out = io.StringIO()

    write_results_jsonl(ROWS, out)

    first, second = (json.loads(line) for line in out.getvalue().splitlines())
    assert first == {
        "question_id": "q1",
        "question": "boundary layer, flat plate",
        "split": "test",
        "ndcg": 0.9,
        "dcg": 4.5,
        "ideal_dcg": 5.0,
        "accuracy_hit": True,
        "judged": 2 / 3,
        "unlabelled_in_top_k": 1,
        "ranked_answer_ids": ["a1", "a5", "a9"],
        "labels": [3, 2, None],
        "error": "",
    }
    assert (second["ndcg"], second["error"]) == (None, "ranker answered 500")


def test_write_run_export_unknown_format_is_value_error():
    with pytest.raises(ValueError, match="format must be trec-run, csv or jsonl, not 'xml'"):
        write_run_export("xml", ROWS, io.StringIO(), run_id=1)
