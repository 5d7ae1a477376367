"""TREC qrels / run files and trec_eval 10 compatible ``ndcg_cut``, ``success``, ``P`` and ``recall``,
and ``ndcg_cut_judged`` (``trec_eval -J -m ndcg_cut``: judged documents only).

:func:`score_files` is what ``manage.py score`` runs: read both files, evaluate, return trec_eval's
output lines.  Each step has its own module, imported one way (each only imports those above it):

* :mod:`.docs` – parsed qrels and runs in memory (:class:`TrecQrels`, :class:`TrecRun`), docnos as
  64-bit words and their hashes;
* :mod:`.decimals` – ``strtod``-exact vectorised parsing of scores and grades;
* :mod:`.tokens` – the tokenizer: 1 MB blocks of lines, whitespace separated tokens;
* :mod:`.parallel` – thread pool and memory settings shared by reading and evaluation;
* :mod:`.files` – :func:`read_qrels` / :func:`read_run`, the file formats;
* :mod:`.spec` – the supported measures, default cutoffs and trec_eval's ``-m`` syntax;
* :mod:`.grouping` – lines grouped by query, dense views of a chunk of queries;
* :mod:`.relevance` – ranking (score, docno tie-break), label lookup, ideal gains;
* :mod:`.measures` – the formulas of ``ndcg_cut``, ``ndcg_cut_judged``, ``success``, ``P`` and ``recall``;
* :mod:`.engine` – :func:`evaluate`: which queries count, chunks on threads, the ``all`` mean;
* :mod:`.output` – trec_eval's output lines.

Everything follows trec_eval 10 exactly (``form_res_rels.c``, ``m_ndcg_cut.c``, ``m_success.c``,
``m_P.c``, ``m_recall.c``; ``ndcg_cut_judged`` is ``m_ndcg_cut.c`` under ``form_res_rels.c``'s ``-J``
path); each module's docstring says how.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from .docs import TrecFormatError, TrecQrels, TrecRun, qrels_from_arrays, run_from_arrays
from .engine import TrecEvaluation, evaluate
from .files import read_qrels, read_run
from .output import format_evaluation
from .parallel import default_threads
from .spec import DEFAULT_MEASURES, MEASURE_ORDER, Measure, parse_measures

__all__ = [
    "DEFAULT_MEASURES",
    "MEASURE_ORDER",
    "Measure",
    "TrecEvaluation",
    "TrecFormatError",
    "TrecQrels",
    "TrecRun",
    "default_threads",
    "evaluate",
    "format_evaluation",
    "parse_measures",
    "qrels_from_arrays",
    "read_qrels",
    "read_run",
    "run_from_arrays",
    "score_files",
]


def score_files(
    qrels_path: str | os.PathLike[str],
    run_path: str | os.PathLike[str],
    measures: Sequence[str] = DEFAULT_MEASURES,
    *,
    per_query: bool = False,
    complete: bool = False,
    relevance_level: int = 1,
    threads: int | None = None,
) -> list[str]:
    """Read both files, evaluate and return trec_eval's output lines (what ``manage.py score`` prints)."""
    parsed = parse_measures(list(measures) or list(DEFAULT_MEASURES))
    qrels = read_qrels(qrels_path, threads=threads)
    run = read_run(run_path, threads=threads)
    result = evaluate(qrels, run, parsed, relevance_level=relevance_level, complete=complete, threads=threads)
    return format_evaluation(result, per_query=per_query)
