"""Clicks over expected clicks (COEC), computed as OpenSearch's Search Relevance Workbench computes it.

Source followed: ``CoecClickModel.java`` and ``ClickthroughRate.java`` of opensearch-project/
search-relevance (``src/main/java/org/opensearch/searchrelevance/judgments/clickmodel/coec/`` and
``.../model/``; the version with the date range, ``CoecClickModelParameters(maxRank, startDate, endDate,
ubiEventsIndex)``, commit 1134d5668edf). On the UBI events kept (``position.ordinal ≤ maxRank`` and, when given, the
timestamp's UTC day within [start_date, end_date]):

1. Expected CTR per rank over every query: ``ctr(r) = clicks at r / impressions at r`` for the ranks
   ``r = 0, 1, …, maxRank − 1`` (SRW's loop; 0 when a rank has no impression). SRW counts them with a
   terms aggregation of ``action_name`` and, under it, of the ordinal with ``size = maxRank``: an action
   whose events span more than maxRank ordinals keeps the maxRank most frequent ones (ties: the smaller
   ordinal), and the rest count 0. Reproduced here.
2. Per (user_query, object_id), from every event kept: ``clicks``, ``impressions``, and the **best
   rank**: the smallest ordinal among its clicks *and* impressions (``ClickthroughRate.logRank``).
3. ``COEC = clicks / (ctr(best rank) · impressions)``, and 0 when that denominator is 0 (no impression,
   or a best rank with no expected CTR). SRW prints it with 3 decimals; the value is kept unrounded.

So it is **the best rank, not the rank of each impression**: a hit shown once at rank 0 and nine times at
rank 5 is expected to be clicked ten times at rank 0's rate. Other details, as the code does them: action
names are compared case-insensitively; an event with no user query is skipped (SRW's map throws on a null
key and the hit is dropped); a pair with events of other actions only (e.g. ``hover``) is listed with 0
clicks, 0 impressions, COEC 0 and no best rank (``NO_RANK``).

Ordinals: SRW's sample data count from 0, and its CTR table holds ranks 0 … maxRank − 1 while its filter
keeps ordinal maxRank too, whose pairs then get COEC 0 if that is their best rank. Our log counts from 1
(an ordinal < 1 is refused), so ``first_ordinal=0`` (the default) gives exactly what SRW computes from our
exported log, and ``first_ordinal=1`` shifts the table to ranks 1 … maxRank, which is what SRW means.

The date range is OpenSearch's ``range`` on ``timestamp`` with ``format: yyyy-MM-dd``: ``gte`` a date is
its 00:00:00.000 UTC and ``lte`` a date rounds up to its 23:59:59.999 UTC, so both days are included.

Vectorised: events as parallel arrays; one ``np.unique`` for the pairs, ``np.bincount`` for the counts,
``np.minimum.at`` for the best ranks.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["NO_RANK", "Coec", "coec", "expected_ctr"]

NO_RANK = -1  # a pair with no click and no impression (SRW leaves Integer.MAX_VALUE there)
_DAY = np.timedelta64(1, "D")


@dataclass(frozen=True)
class Coec:
    """One row per (user_query, object_id), sorted by both; ``expected_ctr[i]`` is the CTR of rank
    ``first_ordinal + i``."""

    user_query: NDArray[np.object_]
    object_id: NDArray[np.object_]
    clicks: NDArray[np.int64]
    impressions: NDArray[np.int64]
    best_rank: NDArray[np.int64]
    value: NDArray[np.float64]
    expected_ctr: NDArray[np.float64]
    first_ordinal: int


def _kept(
    ordinal: NDArray[np.int64],
    timestamp: NDArray[np.datetime64] | None,
    *,
    max_rank: int,
    start_date: dt.date | None,
    end_date: dt.date | None,
) -> NDArray[np.bool_]:
    keep = ordinal <= max_rank
    if start_date is not None or end_date is not None:
        if timestamp is None:
            raise ValueError("a date range needs the events' timestamps")
        if start_date is not None:
            keep &= timestamp >= np.datetime64(start_date, "ms")
        if end_date is not None:
            keep &= timestamp < np.datetime64(end_date, "ms") + _DAY
    return keep


def _top_ordinals(ordinals: NDArray[np.int64], size: int) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The ``size`` most frequent ordinals and their counts, as a terms aggregation returns them."""
    values, counts = np.unique(ordinals, return_counts=True)
    order = np.lexsort((values, -counts))[:size]
    return values[order], counts[order]


def expected_ctr(
    action: NDArray[np.str_], ordinal: NDArray[np.int64], *, max_rank: int, first_ordinal: int = 0
) -> NDArray[np.float64]:
    """``ctr(r)`` for r = first_ordinal … first_ordinal + max_rank − 1 from the events kept (step 1);
    ``action`` in lower case."""
    ranks = np.arange(first_ordinal, first_ordinal + max_rank)
    per_rank = []
    for name in ("click", "impression"):
        values, counts = _top_ordinals(ordinal[action == name], max_rank)
        table = np.zeros(max_rank, dtype=np.int64)
        inside = (values >= first_ordinal) & (values < first_ordinal + max_rank)
        table[values[inside] - first_ordinal] = counts[inside]
        per_rank.append(table)
    clicks, impressions = per_rank
    return np.divide(clicks, impressions, out=np.zeros(ranks.size), where=impressions > 0)


def coec(
    *,
    action: ArrayLike,
    ordinal: ArrayLike,
    user_query: ArrayLike,
    object_id: ArrayLike,
    max_rank: int,
    timestamp: ArrayLike | None = None,
    start_date: dt.date | None = None,
    end_date: dt.date | None = None,
    first_ordinal: int = 0,
) -> Coec:
    """COEC of every (user_query, object_id) from UBI events given as parallel arrays: ``action``
    (``action_name``), ``ordinal`` (``event_attributes.position.ordinal``), ``user_query`` (the query's
    text, None when unknown), ``object_id`` (``event_attributes.object.object_id``) and ``timestamp``
    (naive UTC: ``np.datetime64`` values or naive datetimes; needed only with a date range)."""
    if max_rank < 1:
        raise ValueError(f"max_rank must be at least 1, got {max_rank}")
    act = np.char.lower(np.asarray(action, dtype=str)) if np.size(action) else np.empty(0, dtype=str)
    rank = np.asarray(ordinal, dtype=np.int64)
    queries = np.asarray(user_query, dtype=object)
    objects = np.asarray(object_id, dtype=object)
    stamps = None if timestamp is None else np.asarray(timestamp, dtype="datetime64[ms]")
    if not act.size == rank.size == queries.size == objects.size:
        raise ValueError("action, ordinal, user_query and object_id must have the same length")
    if stamps is not None and stamps.size != rank.size:
        raise ValueError("timestamp must have one value per event")
    keep = _kept(rank, stamps, max_rank=max_rank, start_date=start_date, end_date=end_date)
    ctr = expected_ctr(act[keep], rank[keep], max_rank=max_rank, first_ordinal=first_ordinal)
    keep &= np.array([q is not None for q in queries], dtype=bool)
    act, rank, queries, objects = act[keep], rank[keep], queries[keep], objects[keep]

    query_names, query_index = np.unique(queries.astype(str), return_inverse=True)
    object_names, object_index = np.unique(objects.astype(str), return_inverse=True)
    pair_codes, pair = np.unique(query_index * max(object_names.size, 1) + object_index, return_inverse=True)
    n_pairs = pair_codes.size
    is_click, is_impression = act == "click", act == "impression"
    clicks = np.bincount(pair, weights=is_click, minlength=n_pairs).astype(np.int64)
    impressions = np.bincount(pair, weights=is_impression, minlength=n_pairs).astype(np.int64)
    counted = is_click | is_impression
    best = np.full(n_pairs, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, pair[counted], rank[counted])
    best = np.where(best == np.iinfo(np.int64).max, NO_RANK, best)

    slot = best - first_ordinal
    in_table = (best != NO_RANK) & (slot >= 0) & (slot < max_rank)
    expected = np.where(in_table, ctr[np.clip(slot, 0, max_rank - 1)], 0.0) * impressions
    value = np.divide(clicks, expected, out=np.zeros(n_pairs), where=expected > 0)
    divisor = max(object_names.size, 1)
    return Coec(
        user_query=query_names[pair_codes // divisor].astype(object),
        object_id=object_names[pair_codes % divisor].astype(object),
        clicks=clicks,
        impressions=impressions,
        best_rank=best,
        value=value,
        expected_ctr=ctr,
        first_ordinal=first_ordinal,
    )
