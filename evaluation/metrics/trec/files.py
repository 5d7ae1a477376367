"""Reading TREC qrels and run files into :class:`.docs.TrecQrels` / :class:`.docs.TrecRun`.

File formats (whitespace separated, ``#`` starts a comment line, blank lines are ignored):

* qrels: ``qid iter docno grade``, exactly 4 columns, ``grade`` an integer (negative = "in the pool but
  not judged", as in trec_eval).
* run: ``qid Q0 docno rank score tag [anything ...]``; ``rank`` and everything after ``tag`` are
  ignored.  ``score`` is a decimal number (parsed to the same 64-bit float as C's ``strtod``; NaN is
  refused).  The run id printed for ``runid`` is the ``tag`` of the last line.

Blocks are tokenised by :mod:`.tokens` on :func:`.parallel.default_threads` threads and collected, in
file order, into column arrays preallocated from the file size.  A malformed line raises
``TrecFormatError`` naming the file and the line.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .docs import IntArray, TrecFormatError, TrecQrels, TrecRun, WordArray, decode, hash_words
from .parallel import default_threads, ordered_map, small_pages
from .tokens import LineError, as_strings, blocks, gather, parse_grades, parse_scores, short_keys, tokenize

__all__ = ["read_qrels", "read_run"]


@dataclass
class _Parsed:
    """What one block contributes: query id runs, docnos, hashes and the score or grade column."""

    lines: int
    nbytes: int
    qid_runs: NDArray[np.bytes_]
    run_lengths: IntArray
    words: WordArray
    hashes: WordArray
    values: NDArray
    run_id: str | None


def _parse_block(buffer: NDArray[np.uint8], end: int, run: bool) -> _Parsed:
    """Parse one block of a run (``run=True``) or qrels file; safe to call from several threads."""
    block = tokenize(buffer, end, 6 if run else 4, exact=not run)
    first = block.first
    if first.size == 0:
        none = np.zeros(0, dtype=np.int64)
        no_words = np.zeros((0, 1), dtype=np.uint64)
        return _Parsed(block.lines, end, np.zeros(0, "S1"), none, no_words, no_words[:, 0], none, None)
    keys: NDArray = short_keys(block, first)  # type: ignore[assignment]
    if keys is None:  # long query ids: compare the strings themselves
        keys = as_strings(gather(block, first))
    change = np.ones(keys.size, dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=change[1:])
    run_starts = np.flatnonzero(change)
    qid_runs = as_strings(gather(block, first[run_starts]))
    run_lengths = np.diff(np.append(run_starts, keys.size))
    words = gather(block, first + 2, multiple=8).view(">u8").astype(np.uint64)
    values: NDArray = parse_scores(block, first + 4) if run else parse_grades(block, first + 3)
    run_id = None
    if run:
        last = int(first[-1] + 5)
        run_id = decode(buffer[block.starts[last] : block.ends[last]].tobytes())
    return _Parsed(block.lines, end, qid_runs, run_lengths, words, hash_words(words), values, run_id)


class _DocsBuilder:
    """Collects the blocks' columns into arrays preallocated from the file size (grown if short)."""

    def __init__(self, file_size: int, dtype: type) -> None:
        self.file_size = file_size
        self.dtype = dtype
        self.size = 0
        self.bytes_seen = 0
        self.qid_runs: list[NDArray[np.bytes_]] = []
        self.run_lengths: list[IntArray] = []
        self.words = np.zeros((0, 1), dtype=np.uint64)
        self.hashes = np.zeros(0, dtype=np.uint64)
        self.values: NDArray = np.zeros(0, dtype=dtype)

    def _reserve(self, rows: int, width: int) -> None:
        needed = self.size + rows
        capacity = self.hashes.size
        if needed > capacity:
            # lines still to come, at the density seen so far, plus 5 %
            remaining = max(0, self.file_size - self.bytes_seen) * needed / max(self.bytes_seen, 1)
            capacity = max(needed + int(remaining * 1.05) + 1024, 2 * capacity)
        if capacity > self.hashes.size or width > self.words.shape[1]:
            width = max(width, self.words.shape[1])
            words = np.zeros((capacity, width), dtype=np.uint64)
            words[: self.size, : self.words.shape[1]] = self.words[: self.size]
            hashes = np.empty(capacity, dtype=np.uint64)
            hashes[: self.size] = self.hashes[: self.size]
            values: NDArray = np.empty(capacity, dtype=self.dtype)
            values[: self.size] = self.values[: self.size]
            self.words, self.hashes, self.values = words, hashes, values

    def add(self, parsed: _Parsed) -> None:
        self.bytes_seen += parsed.nbytes
        rows = parsed.hashes.size
        if rows == 0:
            return
        self._reserve(rows, parsed.words.shape[1])
        part = slice(self.size, self.size + rows)
        self.words[part, : parsed.words.shape[1]] = parsed.words
        self.hashes[part] = parsed.hashes
        self.values[part] = parsed.values
        self.qid_runs.append(parsed.qid_runs)
        self.run_lengths.append(parsed.run_lengths)
        self.size = part.stop

    def finish(self) -> tuple[NDArray[np.bytes_], NDArray[np.int32], WordArray, WordArray, NDArray]:
        if not self.qid_runs:
            return np.zeros(0, "S1"), np.zeros(0, np.int32), self.words, self.hashes, self.values
        unique, inverse = np.unique(np.concatenate(self.qid_runs), return_inverse=True)
        qid_index = np.repeat(inverse.astype(np.int32).ravel(), np.concatenate(self.run_lengths))
        n = self.size
        return unique, qid_index, self.words[:n], self.hashes[:n], self.values[:n]


def _read(path: str | os.PathLike[str], name: str, run: bool, threads: int | None) -> tuple[tuple, str]:
    """Parse a file block by block; returns ``_DocsBuilder.finish()`` and the run id."""
    builder = _DocsBuilder(os.path.getsize(path), np.float64 if run else np.int64)
    run_id = ""
    lines_before = 0  # lines of the blocks already collected
    threads = default_threads() if threads is None else max(1, threads)
    with small_pages():
        try:
            for parsed in ordered_map(
                lambda item: _parse_block(item[0], item[1], run), blocks(path), threads
            ):
                builder.add(parsed)
                lines_before += parsed.lines
                run_id = parsed.run_id if parsed.run_id is not None else run_id
        except LineError as error:
            raise TrecFormatError(f"{name} line {lines_before + error.line}: {error.detail}") from None
        return builder.finish(), run_id


def read_run(path: str | os.PathLike[str], name: str | None = None, *, threads: int | None = None) -> TrecRun:
    """Parse a TREC run file (``qid Q0 docno rank score tag``); ``TrecFormatError`` names a bad line.

    Blocks of the file are parsed on ``threads`` threads (default :func:`default_threads`).
    """
    name = name if name is not None else os.fspath(path)
    (unique, qid_index, words, hashes, values), run_id = _read(path, name, True, threads)
    if qid_index.size == 0:
        raise TrecFormatError(f"{name}: the run has no results")
    return TrecRun(unique, qid_index, words, hashes, values, run_id, name)


def read_qrels(
    path: str | os.PathLike[str], name: str | None = None, *, threads: int | None = None
) -> TrecQrels:
    """Parse a TREC qrels file (``qid iter docno grade``); ``TrecFormatError`` names a bad line."""
    name = name if name is not None else os.fspath(path)
    (unique, qid_index, words, hashes, values), _ = _read(path, name, False, threads)
    if qid_index.size == 0:
        raise TrecFormatError(f"{name}: the qrels file has no judgements")
    return TrecQrels(unique, qid_index, words, hashes, values, name)
