"""Per-query relevance of the ranked documents, the ideal gains and the number of relevant documents.

Follows trec_eval 10's ``form_res_rels.c``:

* each query's documents are ranked by score descending, ties broken by docno in *descending* byte
  order (``strcmp``); the same docno twice for one query is an error, in the qrels as in the run;
* a retrieved document's relevance is its grade, ``-1`` if it is not in the qrels and ``-2`` if its
  grade is negative;
* the ideal ranking is every positive grade of the query, retrieved or not, descending.

Speed: each query's top documents are found with a row-wise partition instead of a full sort, then
ordered among themselves with the docno tie-break; labels are looked up by hashed docno inside each
query, every hash match being verified byte for byte, so the result is exact whatever the hash does.
Queries are processed in chunks whose dense matrices stay within ``_CELL_BUDGET`` cells.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from numpy.typing import NDArray

from .docs import Docs, FloatArray, IntArray, TrecFormatError, WordArray, decode, words_equal, words_to_bytes
from .grouping import Layout, Source, dense_layout

__all__ = ["chunk_bounds", "evaluate_chunk"]

_CELL_BUDGET = 4_000_000


def _check_duplicates(
    docs: Docs, hashes: WordArray, layout: Layout, what: str, ordered: WordArray | None = None
) -> None:
    """Refuse the same docno twice for one query (trec_eval does too).

    ``ordered``: ``hashes`` sorted along each row, if already at hand.
    """
    if ordered is None:
        ordered = np.sort(hashes, axis=1)  # invalid cells hold hash 0, so they sort first
    equal = ordered[:, 1:] == ordered[:, :-1]
    equal &= ordered[:, 1:] != 0  # empty cells (hash 0, which no document has) sort first
    if not equal.any():
        return
    suspicious = equal.any(axis=1)
    for r in np.flatnonzero(suspicious):
        ids = layout.ids[r] if layout.valid is None else layout.ids[r][layout.valid[r]]
        seen: set[bytes] = set()
        for i in ids:
            value = words_to_bytes(docs.words[i])
            if value in seen:
                qid = decode(bytes(docs.qids[docs.qid_index[ids[0]]]))
                raise TrecFormatError(f"{what}: query {qid} lists document {decode(value)} more than once")
            seen.add(value)


def _take_along(matrix: NDArray, columns: IntArray) -> NDArray:
    """``np.take_along_axis(matrix, columns, axis=1)`` through one flat ``take`` (faster)."""
    offsets = (np.arange(matrix.shape[0]) * matrix.shape[1])[:, None]
    return np.take(np.ascontiguousarray(matrix).ravel(), columns + offsets)


def _top_columns(neg: FloatArray, words: WordArray, ids: IntArray, k: int) -> IntArray:
    """Columns of the ``k`` best documents per row (score desc, docno desc), -1 past the end.

    Only documents scoring at least the k-th best score are candidates (a row-wise partition finds
    it); those few are then fully ordered with the docno tie-break.
    """
    n_rows, width = neg.shape
    k = min(k, width)
    if k < width:
        boundary = np.partition(neg, k - 1, axis=1)[:, k - 1]
        candidate = neg <= boundary[:, None]  # NaN (padding) is never a candidate
        short = np.isnan(boundary)
        if short.any():
            candidate[short] = ~np.isnan(neg[short])
    else:
        candidate = ~np.isnan(neg)
    counts = candidate.sum(axis=1)
    out = np.full((n_rows, k), -1, dtype=np.int64)
    cap = 2 * k + 16
    for rows in (np.flatnonzero(counts <= cap), np.flatnonzero(counts > cap)):
        if rows.size == 0:
            continue
        sub_counts = counts[rows]
        c_width = max(1, int(sub_counts.max()))
        flat_hits = np.flatnonzero(candidate if rows.size == n_rows else candidate[rows])
        rr = np.repeat(np.arange(rows.size), sub_counts)
        cc = flat_hits - rr * width
        rows_rr = rr if rows.size == n_rows else rows[rr]
        source = rows_rr * width + cc  # flat index into the (n_rows, width) matrices
        pos = np.arange(rr.size) - np.repeat(np.cumsum(sub_counts) - sub_counts, sub_counts)
        flat = rr * c_width + pos
        cand_col = np.full(rows.size * c_width, -1, dtype=np.int64)
        cand_col[flat] = cc
        key_score = np.full(rows.size * c_width, np.nan)
        key_score[flat] = neg.ravel()[source]
        cand_words = np.take(words, ids.ravel()[source], axis=0)
        shape = (rows.size, c_width)
        keys: list[NDArray] = []  # least significant first: last docno word ... first word, score
        for j in range(cand_words.shape[1] - 1, -1, -1):
            key = np.zeros(rows.size * c_width, dtype=np.uint64)
            key[flat] = ~cand_words[:, j]  # docno descending
            keys.append(key.reshape(shape))
        scores = key_score.reshape(shape)  # primary: score descending, padding (NaN) last
        # order by score and the first 8 docno bytes; rows where that leaves a tie get all the bytes
        order = np.lexsort((keys[-1], scores), axis=-1)
        if len(keys) > 1:
            sorted_scores = _take_along(scores, order)
            sorted_first = _take_along(keys[-1], order)
            tied = (sorted_scores[:, 1:] == sorted_scores[:, :-1]) & (
                sorted_first[:, 1:] == sorted_first[:, :-1]
            )
            tied_rows = np.flatnonzero(tied.any(axis=1))
            if tied_rows.size:
                order[tied_rows] = np.lexsort([key[tied_rows] for key in keys] + [scores[tied_rows]], axis=-1)
        order = order[:, :k]
        out[rows] = _take_along(cand_col.reshape(rows.size, c_width), order)
    return out


def evaluate_chunk(
    run: Source, qrels: Source, queries: IntArray, depth: int, relevance_level: int
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Relevance of the top ``depth`` documents, sorted ideal gains and number relevant per query."""
    # ---- run: dense -score matrix, pick and order the top documents
    r_layout = dense_layout(run, queries)
    neg = -r_layout.take(run.scores, 0.0)
    if r_layout.valid is not None:
        neg[~r_layout.valid] = np.nan
    r_hash = r_layout.take(run.docs.hashes, np.uint64(0))
    _check_duplicates(run.docs, r_hash, r_layout, getattr(run.docs, "name", "run"))
    top = _top_columns(neg, run.docs.words, r_layout.ids, depth)
    kept = top >= 0
    top_safe = np.where(kept, top, 0)
    top_ids = _take_along(r_layout.ids, top_safe)
    top_hash = _take_along(r_hash, top_safe)

    # ---- qrels: dense grade matrix
    q_layout = dense_layout(qrels, queries)
    grades = q_layout.take(qrels.grades, 0)
    q_hash = q_layout.take(qrels.docs.hashes, np.uint64(0))
    _check_duplicates(qrels.docs, q_hash, q_layout, getattr(qrels.docs, "name", "qrels"))
    q_valid = q_layout.valid if q_layout.valid is not None else np.ones(grades.shape, dtype=bool)

    # ---- relevance of the top documents: hash match inside the query, verified byte for byte
    labels = np.where(kept, -1.0, np.nan)  # -1: not in the qrels (trec_eval RELVALUE_NONPOOL)
    match = top_hash[:, :, None] == q_hash[:, None, :]  # empty qrels cells hold 0: never a match
    first_match = match.argmax(axis=2)  # qrels are free of duplicates: at most one true match
    _, n_top, q_width = match.shape
    found = _take_along(match.reshape(-1, q_width), first_match.reshape(-1, 1)).reshape(kept.shape)
    found &= kept
    hit = np.flatnonzero(found)  # flat (query, rank) positions with a hash match
    if hit.size:
        i, j = np.divmod(hit, n_top)
        m = first_match.ravel()[hit]
        run_words = np.take(run.docs.words, top_ids.ravel()[hit], axis=0)
        q_lines = q_layout.ids.ravel()[i * q_width + m]
        same = words_equal(run_words, np.take(qrels.docs.words, q_lines, axis=0))
        if not same.all():  # a hash collision: look for the true match the slow way
            for x in np.flatnonzero(~same).tolist():
                r = int(i[x])
                cols = np.flatnonzero(q_valid[r])
                target = np.broadcast_to(run_words[x], (cols.size, run_words.shape[1]))
                hits = cols[words_equal(target, np.take(qrels.docs.words, q_layout.ids[r, cols], axis=0))]
                if hits.size:
                    m[x] = hits[0]
                    same[x] = True
        i, j, m = i[same], j[same], m[same]
        matched = grades[i, m]
        labels[i, j] = np.where(matched < 0, -2.0, matched)  # -2: pooled but unjudged

    # ---- ideal ranking: every positive grade of the query, descending
    positive = np.where(q_valid & (grades > 0), grades, 0)
    q_width = positive.shape[1]
    ideal_depth = min(depth, q_width)
    top_grade = int(positive.max()) if positive.size else 0
    if top_grade <= 16:
        # few grade levels: the p-th best grade is the number of levels with more than p grades >= it
        ideal = np.zeros((queries.size, ideal_depth))
        ranks = np.arange(ideal_depth)
        for level in range(1, top_grade + 1):
            ideal += ranks < np.count_nonzero(positive >= level, axis=1)[:, None]
    else:
        gains = positive.astype(np.float64)
        if ideal_depth < q_width:
            gains = -np.partition(-gains, ideal_depth - 1, axis=1)[:, :ideal_depth]
        ideal = -np.sort(-gains, axis=1)
    num_rel = np.count_nonzero(q_valid & (grades >= max(relevance_level, 0)), axis=1)
    return labels, ideal, num_rel


def chunk_bounds(run_counts: IntArray, qrels_counts: IntArray, depth: int) -> Iterator[tuple[int, int]]:
    """Split the evaluated queries into chunks whose dense matrices stay within the cell budget."""
    total = run_counts.size
    start = 0
    size = 4096
    while start < total:
        stop = min(total, start + size)
        longest = int(run_counts[start:stop].max())
        cells = (stop - start) * max(longest, min(depth, longest) * int(qrels_counts[start:stop].max()))
        if cells > _CELL_BUDGET and stop - start > 1:
            size = max(1, (stop - start) // 2)
            continue
        yield start, stop
        start = stop
        size = 4096
