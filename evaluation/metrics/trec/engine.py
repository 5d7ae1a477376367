"""trec_eval 10 compatible evaluation of a parsed run against parsed qrels.

* queries only in the run are ignored; queries in the qrels without results are skipped, unless
  ``complete=True`` (``-c``): then they are scored as a ranking of one unjudged document
  (:data:`BOGUS_DOCNO`), i.e. 0;
* per-query values come from :mod:`.relevance` (ranking and labels) and :mod:`.measures` (formulas);
* judged-only measures (:data:`.spec.JUDGED_ONLY`, trec_eval ``-J``) read the labels of the whole
  ranking, not only of its top ``max(cutoffs)`` documents, since the judged ones can be anywhere in it;
  other measures are unaffected (asked alone, they still look at the top ``max(cutoffs)`` only);
* the ``all`` value is the mean over the evaluated queries (:meth:`TrecEvaluation.mean`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .docs import FloatArray, IntArray, TrecQrels, TrecRun, decode, hash_words, strings_to_words
from .grouping import Source, group
from .measures import values_for
from .parallel import run_parallel, small_pages
from .relevance import chunk_bounds, evaluate_chunk
from .spec import DEFAULT_MEASURES, JUDGED_ONLY, Measure, parse_measures

__all__ = ["BOGUS_DOCNO", "TrecEvaluation", "evaluate"]

#: trec_eval's stand-in ranking for a query missing from the run under ``-c``.
BOGUS_DOCNO = b"ceci_nest_pas_un_docno"


@dataclass(frozen=True)
class TrecEvaluation:
    """Per-query values (``values[name][i]`` for query ``qids[i]``) and what ``all`` needs."""

    qids: list[str]
    measures: list[Measure]
    values: dict[str, FloatArray]
    run_id: str

    @property
    def num_q(self) -> int:
        return len(self.qids)

    def mean(self, name: str) -> float:
        """trec_eval's ``all`` value: per-query values summed in query order, divided by ``num_q``."""
        values = self.values[name]
        return float(np.cumsum(values)[-1] / values.size) if values.size else math.nan


def evaluate(
    qrels: TrecQrels,
    run: TrecRun,
    measures: Sequence[str] | Sequence[Measure] = DEFAULT_MEASURES,
    *,
    relevance_level: int = 1,
    complete: bool = False,
    threads: int | None = None,
) -> TrecEvaluation:
    """Score a parsed run against parsed qrels exactly as trec_eval 10 does (see the module docstring).

    ``relevance_level`` is trec_eval's ``-l`` and ``complete`` its ``-c``.  Raises ``ValueError`` when
    no query has both results and judgements, and ``TrecFormatError`` for duplicate documents.
    """
    with small_pages():
        return _evaluate(qrels, run, measures, relevance_level, complete, threads)


def _evaluate(
    qrels: TrecQrels,
    run: TrecRun,
    measures: Sequence[str] | Sequence[Measure],
    relevance_level: int,
    complete: bool,
    threads: int | None,
) -> TrecEvaluation:
    if all(isinstance(m, Measure) for m in measures):
        parsed = [m for m in measures if isinstance(m, Measure)]
    else:
        parsed = parse_measures([str(m) for m in measures])
    value_measures = [m for m in parsed if m.cutoffs]
    depth = max((max(m.cutoffs) for m in value_measures), default=1)

    n_queries = qrels.qids.size
    position = np.searchsorted(qrels.qids, run.qids)
    clipped = np.minimum(position, max(n_queries - 1, 0))
    known = (position < n_queries) & (qrels.qids[clipped] == run.qids)
    mapping = np.where(known, clipped, -1).astype(np.int32)
    if mapping.size == n_queries and (mapping == np.arange(n_queries)).all():
        run_query = run.qid_index  # same queries in both files: no translation needed
    else:
        run_query = mapping[run.qid_index]
    run_source = group(run, run_query, n_queries)
    del run_query
    qrels_source = group(qrels, qrels.qid_index, n_queries)
    if any(m.name in JUDGED_ONLY for m in value_measures):
        depth = max(depth, int(run_source.counts.max(initial=1)))  # the whole ranking

    has_run = run_source.counts > 0
    evaluated = np.arange(n_queries) if complete else np.flatnonzero(has_run)
    if evaluated.size == 0:
        raise ValueError("No queries with both results and relevance info")

    bogus_words = strings_to_words([BOGUS_DOCNO])
    bogus = TrecRun(
        qrels.qids,
        np.zeros(1, np.int32),
        bogus_words,
        hash_words(bogus_words),
        np.ones(1),
        run.run_id,
        run.name,
    )
    # every missing query "retrieves" line 0 of the bogus run
    bogus_source = Source(
        bogus, np.zeros(1, np.int64), np.zeros(n_queries, np.int64), np.ones(n_queries, np.int64)
    )

    values: dict[str, FloatArray] = {
        name: np.zeros(evaluated.size) for m in value_measures for name in m.value_names
    }
    parts = (
        (run_source, np.flatnonzero(has_run[evaluated])),
        (bogus_source, np.flatnonzero(~has_run[evaluated])),
    )
    for source, subset in parts:
        if subset.size == 0 or not value_measures:
            continue
        # file order, so that consecutive queries are consecutive lines (no gathering needed)
        subset = subset[np.argsort(source.starts[evaluated[subset]], kind="stable")]
        queries = evaluated[subset]

        def work(
            bounds: tuple[int, int],
            source: Source = source,
            queries: IntArray = queries,
            subset: IntArray = subset,
        ) -> None:
            start, stop = bounds
            labels, ideal, num_rel = evaluate_chunk(
                source, qrels_source, queries[start:stop], depth, relevance_level
            )
            for measure in value_measures:
                for name, value in values_for(measure, labels, ideal, num_rel, relevance_level).items():
                    values[name][subset[start:stop]] = value

        chunks = list(chunk_bounds(source.counts[queries], qrels_source.counts[queries], depth))
        run_parallel(work, chunks, threads)
    try:
        qids = qrels.qids[evaluated].astype(str).tolist()
    except UnicodeDecodeError:
        qids = [decode(bytes(q)) for q in qrels.qids[evaluated]]
    return TrecEvaluation(qids=qids, measures=parsed, values=values, run_id=run.run_id)
