"""``manage.py score`` prints what trec_eval 10 prints (checked against trec_eval's own test outputs)."""

from __future__ import annotations

from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

DATA = Path(__file__).resolve().parent.parent / "data" / "trec_eval"


def score(*args: str) -> list[str]:
    out = StringIO()
    call_command("score", *args, stdout=out)
    return out.getvalue().splitlines()


def expected(name: str, prefixes: tuple[str, ...] = ("ndcg_cut_", "success_")) -> list[str]:
    return [line.rstrip("\n") for line in (DATA / name).open() if line.startswith(prefixes)]


def test_score_command_per_query_matches_out_test_aq():
    got = score("-q", "-m", "ndcg_cut", "-m", "success", str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert got == expected("out.test.aq")


def test_score_command_complete_matches_out_test_aqc():
    got = score("-q", "-c", "-mndcg_cut", "-msuccess", str(DATA / "qrels.test"), str(DATA / "results.trunc"))
    assert got == expected("out.test.aqc")


def test_score_command_relevance_level_matches_out_test_aql():
    got = score(
        "-q",
        "-l2",
        "-m",
        "ndcg_cut",
        "-m",
        "success",
        str(DATA / "qrels.rel_level"),
        str(DATA / "results.test"),
    )
    assert got == expected("out.test.aql")


def test_score_command_cutoff_lists_match_out_test_meas_params():
    got = score(
        "-q",
        "-m",
        "ndcg_cut.10,20,23.4",
        "-m",
        "success.2,5,20",
        str(DATA / "qrels.test"),
        str(DATA / "results.test"),
    )
    assert got == expected("out.test.meas_params")


def test_score_command_runid_and_num_q_match_trec_eval():
    got = score(
        "-m",
        "num_q",
        "-m",
        "runid",
        "-m",
        "ndcg_cut.10",
        str(DATA / "qrels.test"),
        str(DATA / "results.test"),
    )
    summary = [
        line for line in expected("out.test.aq", ("runid", "num_q", "ndcg_cut_10 ")) if "\tall\t" in line
    ]
    assert got == summary
    assert got[0] == "runid                 \tall\tSTANDARD"


def test_score_command_default_measures_are_ndcg_cut_10_and_success_5():
    got = score(str(DATA / "qrels.test"), str(DATA / "results.test"))
    assert got == ["ndcg_cut_10           \tall\t0.3016", "success_5             \tall\t0.3333"]


def test_score_command_missing_queries_skipped_without_c():
    got = score("-q", "-m", "success.5", str(DATA / "qrels.test"), str(DATA / "results.trunc"))
    assert got == [
        "success_5             \t301\t0.0000",
        "success_5             \t303\t1.0000",
        "success_5             \tall\t0.5000",
    ]


def test_score_command_malformed_line_names_file_and_line(tmp_path):
    run = tmp_path / "run.txt"
    run.write_text("301 Q0 a 1 1.5 t\n" * 16 + "301 Q0 b 17 abc t\n")
    with pytest.raises(CommandError, match=r"run\.txt line 17: score 'abc' is not a number"):
        score(str(DATA / "qrels.test"), str(run))


def test_score_command_missing_file_is_an_error(tmp_path):
    with pytest.raises(CommandError, match="No such file"):
        score(str(DATA / "qrels.test"), str(tmp_path / "nope.txt"))


def test_score_command_unknown_measure_is_an_error():
    with pytest.raises(CommandError, match="unknown measure 'map'"):
        score("-m", "map", str(DATA / "qrels.test"), str(DATA / "results.test"))


def test_score_command_ndcg_cut_judged_matches_trec_eval_J():
    qrels, run = str(DATA / "qrels.rel_level"), str(DATA / "results.test")
    got = score("-q", "-m", "ndcg_cut.10", "-m", "ndcg_cut_judged.10", qrels, run)
    # out.test.Jl is trec_eval -J -q -m ndcg_cut qrels.rel_level results.test: its ndcg_cut_10 lines are ours
    # under the name ndcg_cut_judged_10; out.test.aql has the plain ndcg_cut_10 of the same files
    judged = [
        "ndcg_cut_judged_10    \t" + line.split("\t", 1)[1]
        for line in expected("out.test.Jl", ("ndcg_cut_10 ",))
    ]
    plain = expected("out.test.aql", ("ndcg_cut_10 ",))
    assert got == [line for pair in zip(plain, judged, strict=True) for line in pair]
    assert got[-2:] == ["ndcg_cut_10           \tall\t0.2656", "ndcg_cut_judged_10    \tall\t0.2900"]
