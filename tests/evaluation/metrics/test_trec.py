"""TREC parsing and trec_eval compatible scoring (pure numpy part of ``manage.py score``)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluation.metrics import trec
from evaluation.metrics.trec import (
    TrecFormatError,
    evaluate,
    format_evaluation,
    parse_measures,
    qrels_from_arrays,
    read_qrels,
    read_run,
    run_from_arrays,
    score_files,
)

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"
MEASURE_PREFIXES = ("ndcg_cut_", "success_", "P_", "recall_", "runid", "num_q")


def expected_lines(name: str) -> list[str]:
    """The lines of a trec_eval expected output for the measures we implement."""
    return [line.rstrip("\n") for line in (DATA / name).open() if line.startswith(MEASURE_PREFIXES)]


ALL_OURS = ["runid", "num_q", "P", "recall", "ndcg_cut", "success"]


# ---------------------------------------------------------------- trec_eval's own test outputs


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


# ---------------------------------------------------------------- ranking and ties


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


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


def test_evaluate_rank_column_is_ignored(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 d2 1\n")
    run = write(tmp_path, "run", "q Q0 d1 1 0.1 t\nq Q0 d2 2 0.9 t extra columns\n")
    assert score_files(qrels, run, ["success.1"]) == ["success_1             \tall\t1.0000"]


def test_evaluate_scores_are_64_bit_floats(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 d2 1\n")
    # differ only in the 17th significant digit: a 32-bit float would make them tie (d2 > d1 wins)
    run = write(tmp_path, "run", "q Q0 d1 1 0.10000000000000002 t\nq Q0 d2 2 0.1 t\n")
    assert score_files(qrels, run, ["success.1"]) == ["success_1             \tall\t0.0000"]


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


def reference(qids, docnos, scores, labels, level=1, complete=False):
    """Straightforward trec_eval semantics, one query at a time."""
    runs: dict[str, list[tuple[float, bytes]]] = {}
    for q, d, s in zip(qids, docnos, scores, strict=True):
        runs.setdefault(q, []).append((s, d.encode()))
    judged: dict[str, dict[bytes, int]] = {}
    for (q, d), g in labels.items():
        judged.setdefault(q, {})[d.encode()] = g
    out: dict[str, list[float]] = {}
    for q in sorted(judged, key=str.encode):
        if q not in runs and not complete:
            continue
        ranked = [d for _, d in sorted(runs.get(q, [(1.0, b"ceci_nest_pas_un_docno")]), reverse=True)]
        rel = [judged[q].get(d, -1) for d in ranked]
        rel = [-2 if r < -1 or (r == -1 and d in judged[q]) else r for r, d in zip(rel, ranked, strict=True)]
        ideal = sorted((g for g in judged[q].values() if g > 0), reverse=True)
        num_rel = sum(g >= max(level, 0) for g in judged[q].values())

        def dcg(gains, k):
            return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]) if g > 0)  # rank i + 1

        for k in (5, 10, 100):
            best = dcg(ideal, k)
            out.setdefault(f"ndcg_cut_{k}", []).append(dcg(rel, k) / best if best > 0 else 0.0)
        for k in (1, 3):
            out.setdefault(f"success_{k}", []).append(float(any(r >= level for r in rel[:k])))
        out.setdefault("P_7", []).append(sum(r >= level for r in rel[:7]) / 7)
        hits = sum(r >= level for r in rel[:9])
        out.setdefault("recall_9", []).append(hits / num_rel if num_rel else 0.0)
    return out


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


def test_evaluate_hash_collisions_still_exact(monkeypatch, tmp_path):
    # a terrible hash (4 values): every lookup collides, the byte-for-byte check must sort it out
    monkeypatch.setattr(trec, "_hash_words", lambda words: (words[:, 0] & np.uint64(3)) + np.uint64(1))
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


def test_evaluate_threads_give_the_same_values():
    qrels, run = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test", threads=3)
    one = evaluate(qrels, run, ["ndcg_cut", "success"], threads=1)
    many = evaluate(qrels, run, ["ndcg_cut", "success"], threads=4)
    for name, values in one.values.items():
        assert np.array_equal(values, many.values[name]), name


def test_evaluate_small_chunks_give_the_same_values(monkeypatch):
    qrels, run = read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test")
    whole = evaluate(qrels, run, ["ndcg_cut", "success"])
    monkeypatch.setattr(trec, "_CELL_BUDGET", 10)
    chunked = evaluate(qrels, run, ["ndcg_cut", "success"])
    for name, values in whole.values.items():
        assert np.array_equal(values, chunked.values[name]), name


def test_read_run_small_blocks_give_the_same_parse(monkeypatch):
    whole = read_run(DATA / "results.test", threads=1)
    monkeypatch.setattr(trec, "_BLOCK_BYTES", 100)
    blocks = read_run(DATA / "results.test", threads=3)
    assert np.array_equal(whole.scores, blocks.scores)
    assert np.array_equal(whole.words, blocks.words)
    assert np.array_equal(whole.qids[whole.qid_index], blocks.qids[blocks.qid_index])
    assert whole.run_id == blocks.run_id == "STANDARD"


# ---------------------------------------------------------------- parsing quirks


def test_read_run_tiny_blocks_long_lines_and_long_ids(tmp_path, monkeypatch):
    long_doc = "d" * 100  # longer than the block slack
    text = f"a-very-long-query-id Q0 {long_doc} 1 0.5 t\na-very-long-query-id Q0 x 2 0.25 t\nq2 Q0 y 1 1 t\n"
    monkeypatch.setattr(trec, "_BLOCK_BYTES", 16)  # every line is longer than a block
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


def test_evaluate_negative_grade_is_pooled_but_unjudged(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 a -1\nq 0 b 1\n")
    run = write(tmp_path, "run", "q Q0 a 1 2 t\nq Q0 c 2 1 t\n")
    # -l -1: unjudged (-2) is not relevant, not-in-pool (-1) is
    assert score_files(qrels, run, ["success.1,2"], relevance_level=-1) == [
        "success_1             \tall\t0.0000",
        "success_2             \tall\t1.0000",
    ]


def test_read_run_bad_score_names_file_and_line(tmp_path):
    path = write(tmp_path, "run.txt", "q Q0 a 1 1 t\n\nq Q0 b 2 abc t\n")
    with pytest.raises(TrecFormatError, match=r"run\.txt line 3: score 'abc' is not a number"):
        read_run(path)


def test_read_run_bad_line_number_counts_earlier_blocks(tmp_path, monkeypatch):
    path = write(tmp_path, "run.txt", "q Q0 a 1 1 t\n" * 500 + "q Q0 b 2 1\n")
    monkeypatch.setattr(trec, "_BLOCK_BYTES", 256)  # many blocks, parsed on several threads
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


def test_evaluate_no_common_query_raises(tmp_path):
    qrels = write(tmp_path, "qrels", "q 0 a 1\n")
    run = write(tmp_path, "run", "other Q0 a 1 1 t\n")
    with pytest.raises(ValueError, match="No queries with both results and relevance info"):
        score_files(qrels, run)


# ---------------------------------------------------------------- measures


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


def test_format_evaluation_summary_only_by_default():
    result = evaluate(read_qrels(DATA / "qrels.test"), read_run(DATA / "results.test"), ["ndcg_cut.10"])
    assert format_evaluation(result) == ["ndcg_cut_10           \tall\t0.3016"]
