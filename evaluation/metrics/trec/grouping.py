"""A file's lines grouped by query, and dense (queries x documents) views of a few queries.

Files normally hold each query in one block of consecutive lines; then nothing is copied and a chunk of
consecutive queries is a plain reshape of the file's columns.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .docs import Docs, FloatArray, IntArray

__all__ = ["Layout", "Source", "dense_layout", "group"]


@dataclass
class Source:
    """One file's lines grouped by query (query = index into the qrels' query ids)."""

    docs: Docs
    lines: IntArray | None  # line ids in query order; None when the file is already grouped
    starts: IntArray  # per query: position of its first line in ``lines``
    counts: IntArray  # per query: number of lines

    @property
    def scores(self) -> FloatArray:
        return self.docs.scores  # type: ignore[attr-defined,no-any-return]

    @property
    def grades(self) -> IntArray:
        return self.docs.grades  # type: ignore[attr-defined,no-any-return]


def _ranges(starts: IntArray, lengths: IntArray) -> IntArray:
    """Concatenation of ``arange(s, s + n)`` for each (s, n)."""
    offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return offsets + np.arange(int(lengths.sum()), dtype=np.int64)


def group(docs: Docs, qid_index: NDArray, n_queries: int) -> Source:
    """Group lines by query index (negative: dropped).

    Files normally hold each query in one block of consecutive lines: then nothing is moved and
    ``starts`` point into the file.  Otherwise the blocks are put in query order (a stable sort of the
    blocks, not of the lines).
    """
    keep = qid_index >= 0
    base: IntArray | None = None
    if keep.all():
        queries = qid_index
    else:
        base = np.flatnonzero(keep)
        queries = qid_index[base]
    n = queries.size
    if n == 0:
        zeros = np.zeros(n_queries, dtype=np.int64)
        return Source(docs, base, zeros, zeros.copy())
    block_starts = np.concatenate([[0], np.flatnonzero(queries[1:] != queries[:-1]) + 1])
    block_queries = queries[block_starts].astype(np.int64)
    block_counts = np.diff(np.append(block_starts, n))
    counts = np.zeros(n_queries, dtype=np.int64)
    np.add.at(counts, block_queries, block_counts)
    if np.bincount(block_queries, minlength=n_queries).max() <= 1:  # one block per query
        starts = np.zeros(n_queries, dtype=np.int64)
        starts[block_queries] = block_starts
        return Source(docs, base, starts, counts)
    order = np.argsort(block_queries, kind="stable")
    lines = _ranges(block_starts[order], block_counts[order])
    return Source(docs, lines if base is None else base[lines], np.cumsum(counts) - counts, counts)


@dataclass
class Layout:
    """Dense (queries x longest) view of the selected queries' lines."""

    ids: IntArray  # (m, W) line ids (arbitrary where not valid)
    valid: NDArray[np.bool_] | None  # None: every cell is valid
    contiguous: slice | None  # the lines are exactly ``slice`` of the file, row after row

    def take(self, values: NDArray, fill: object) -> NDArray:
        if self.contiguous is not None:
            return values[self.contiguous].reshape(self.ids.shape)
        out = values[self.ids]
        if self.valid is not None:
            out[~self.valid] = fill
        return out


def dense_layout(source: Source, queries: IntArray) -> Layout:
    counts = source.counts[queries]
    starts = source.starts[queries]
    width = int(counts.max())
    uniform = bool((counts == width).all())
    if uniform and source.lines is None and bool((np.diff(starts) == width).all()):
        lo = int(starts[0])
        ids = np.arange(lo, lo + width * queries.size, dtype=np.int64).reshape(queries.size, width)
        return Layout(ids, None, slice(lo, lo + width * queries.size))
    positions = starts[:, None] + np.arange(width)
    valid = None if uniform else np.arange(width) < counts[:, None]
    if valid is not None:
        positions = np.where(valid, positions, starts[:, None])
    ids = positions if source.lines is None else source.lines[positions]
    return Layout(ids, valid, None)
