"""Reading TREC run and qrels files (:mod:`evaluation.metrics.trec.files`, ``.tokens``, ``.decimals``)."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.metrics.trec import score_files, tokens
from evaluation.metrics.trec.docs import TrecFormatError
from evaluation.metrics.trec.files import read_qrels, read_run
from tests.evaluation.metrics.trec_helpers import DATA, write


def test_read_run_small_blocks_give_the_same_parse(monkeypatch):
    whole = read_run(DATA / "results.test", threads=1)
    monkeypatch.setattr(tokens, "_BLOCK_BYTES", 100)
    blocks = read_run(DATA / "results.test", threads=3)
    assert np.array_equal(whole.scores, blocks.scores)
    assert np.array_equal(whole.words, blocks.words)
    assert np.array_equal(whole.qids[whole.qid_index], blocks.qids[blocks.qid_index])
    assert whole.run_id == blocks.run_id == "STANDARD"


def test_read_run_tiny_blocks_long_lines_and_long_ids(tmp_path, monkeypatch):
    long_doc = "d" * 100  # longer than the block slack
    text = f"a-very-long-query-id Q0 {long_doc} 1 0.5 t\na-very-long-query-id Q0 x 2 0.25 t\nq2 Q0 y 1 1 t\n"
    monkeypatch.setattr(tokens, "_BLOCK_BYTES", 16)  # every line is longer than a block
    run = read_run(write(tmp_path, "run", text))
    assert run.scores.tolist() == [0.5, 0.25, 1.0]
    assert [bytes(q) for q in run.qids[run.qid_index]] == [b"a-very-long-query-id"] * 2 + [b"q2"]
    assert run.docno(0) == long_doc and run.docno(2) == "y"


def test_read_run_scores_equal_python_float(tmp_path):
    values = [
        "2.129133",
        "-0.5",
        "+3",
        "7.",
        ".25",
        "1e-3",
        "123456789012345678",
        "0.1000000000000000055511",
        "inf",
        "-0",
    ]
    text = "".join(f"q Q0 d{i} 0 {v} t\n" for i, v in enumerate(values))
    run = read_run(write(tmp_path, "run", text))
    assert run.scores.tolist() == [float(v) for v in values]


@pytest.mark.parametrize("layout", ["{:.6f}", "{:09.4f}", "{:.15f}", "{:.2f}"])
def test_read_run_uniform_score_layout_equals_python_float(tmp_path, layout):
    values = [layout.format(v) for v in np.random.default_rng(1).random(3000) * 9]
    text = "".join(f"q Q0 d{i} 0 {v} t\n" for i, v in enumerate(values))
    run = read_run(write(tmp_path, "run", text))
    assert run.scores.tolist() == [float(v) for v in values]


def test_read_run_whitespace_comments_and_blank_lines(tmp_path):
    text = "# a comment\n\n  q1 \t Q0\td1   1 2.5 tag \r\n\nq2 Q0 d2 1 1 other\n"
    run = read_run(write(tmp_path, "run", text))
    assert run.scores.tolist() == [2.5, 1.0]
    assert [bytes(q) for q in run.qids[run.qid_index]] == [b"q1", b"q2"]
    assert run.run_id == "other"  # the tag of the last line


def test_read_run_last_line_without_newline(tmp_path):
    run = read_run(write(tmp_path, "run", "q Q0 d 1 2 t"))
    assert run.scores.tolist() == [2.0]


def test_read_qrels_negative_grades_and_tabs(tmp_path):
    qrels = read_qrels(write(tmp_path, "qrels", "q\t0\ta\t-1\nq 0 b 4\n"))
    assert qrels.grades.tolist() == [-1, 4]


def test_evaluate_rank_column_is_ignored(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 d2 1\n")
    run = write(tmp_path, "run", "q Q0 d1 1 0.1 t\nq Q0 d2 2 0.9 t extra columns\n")
    assert score_files(qrels, run, ["success.1"]) == ["success_1             \tall\t1.0000"]


def test_evaluate_scores_are_64_bit_floats(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 d2 1\n")
    # differ only in the 17th significant digit: a 32-bit float would make them tie (d2 > d1 wins)
    run = write(tmp_path, "run", "q Q0 d1 1 0.10000000000000002 t\nq Q0 d2 2 0.1 t\n")
    assert score_files(qrels, run, ["success.1"]) == ["success_1             \tall\t0.0000"]


def test_read_run_bad_score_names_file_and_line(tmp_path):
    path = write(tmp_path, "run.txt", "q Q0 a 1 1 t\n\nq Q0 b 2 abc t\n")
    with pytest.raises(TrecFormatError, match=r"run\.txt line 3: score 'abc' is not a number"):
        read_run(path)


def test_read_run_bad_line_number_counts_earlier_blocks(tmp_path, monkeypatch):
    path = write(tmp_path, "run.txt", "q Q0 a 1 1 t\n" * 500 + "q Q0 b 2 1\n")
    monkeypatch.setattr(tokens, "_BLOCK_BYTES", 256)  # many blocks, parsed on several threads
    with pytest.raises(TrecFormatError, match=r"run\.txt line 501: expected at least 6 columns"):
        read_run(path, threads=3)


def test_read_run_nan_score_raises(tmp_path):
    with pytest.raises(TrecFormatError, match="line 1: score 'nan' is not a number"):
        read_run(write(tmp_path, "run", "q Q0 a 1 nan t\n"))


def test_read_run_too_few_columns_raises(tmp_path):
    with pytest.raises(TrecFormatError, match="line 2: expected at least 6 columns.*found 5"):
        read_run(write(tmp_path, "run", "q Q0 a 1 1 t\nq Q0 b 2 1\n"))


def test_read_qrels_wrong_column_count_raises(tmp_path):
    with pytest.raises(TrecFormatError, match="qrels line 1: expected exactly 4 columns.*found 5"):
        read_qrels(write(tmp_path, "qrels", "q 0 a 1 extra\n"), name="qrels")


def test_read_qrels_non_integer_grade_raises(tmp_path):
    with pytest.raises(TrecFormatError, match="line 2: grade '1.5' is not an integer"):
        read_qrels(write(tmp_path, "qrels", "q 0 a 1\nq 0 b 1.5\n"))


def test_read_run_empty_file_raises(tmp_path):
    with pytest.raises(TrecFormatError, match="no results"):
        read_run(write(tmp_path, "run", "# nothing\n"))
