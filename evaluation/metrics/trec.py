"""TREC qrels / run files and trec_eval 10 compatible ``ndcg_cut``, ``success``, ``P`` and ``recall``.

File formats (whitespace separated, ``#`` starts a comment line, blank lines are ignored):

* qrels: ``qid iter docno grade``, exactly 4 columns, ``grade`` an integer (negative = "in the pool but
  not judged", as in trec_eval).
* run: ``qid Q0 docno rank score tag [anything ...]``; ``rank`` and everything after ``tag`` are
  ignored.  ``score`` is a decimal number (parsed to the same 64-bit float as C's ``strtod``; NaN is
  refused).  The run id printed for ``runid`` is the ``tag`` of the last line.

Evaluation follows trec_eval 10 exactly (``form_res_rels.c``, ``m_ndcg_cut.c``, ``m_success.c``,
``m_P.c``, ``m_recall.c``):

* each query's documents are ranked by score descending, ties broken by docno in *descending* byte
  order (``strcmp``); the same docno twice for one query is an error, in the qrels as in the run;
* queries only in the run are ignored; queries in the qrels without results are skipped, unless
  ``complete=True`` (``-c``): then they are scored as a ranking of one unjudged document, i.e. 0;
* a retrieved document's relevance is its grade, ``-1`` if it is not in the qrels and ``-2`` if its
  grade is negative; ``ndcg_cut.k`` = DCG@k / IDCG@k with gain = grade when > 0 and discount
  ``log2(rank + 1)``, the ideal ranking being every grade of the query, retrieved or not (``-l`` is
  ignored; 0 when the query has no positive grade); ``success.k`` is 1 when a document at rank <= k has
  relevance >= ``relevance_level`` (``-l``); ``P.k`` = relevant in the top k / k; ``recall.k`` =
  relevant in the top k / grades >= ``relevance_level`` (0 when there are none);
* the ``all`` line is the mean over the evaluated queries; output lines are
  ``"%-22s\\t%s\\t%6.4f"`` (measure, query id, value), queries in byte order of their ids, measures in
  trec_eval's order (``runid``, ``num_q``, ``P``, ``recall``, ``ndcg_cut``, ``success``), cutoffs
  ascending.  Cutoffs are parsed like C's ``atol`` (``23.4`` is 23); duplicates or cutoffs <= 0 are
  errors, as in trec_eval, and when a measure is given twice the first parameter list wins.

Speed: files are tokenised with numpy in 1 MB blocks (no Python loop per line; blocks are parsed on
:func:`default_threads` threads, numpy releasing the GIL); each query's top documents are found with
a row-wise partition instead of a full sort, then ordered among themselves with the docno tie-break;
labels are looked up by hashed docno inside each query, every hash match being verified byte for
byte, so the result is exact whatever the hash does.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray

from .ranking import dcg_prefix

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

#: Measures printed when none is requested (trec_eval's default would be its "official" set).
DEFAULT_MEASURES: tuple[str, ...] = ("ndcg_cut.10", "success.5")
#: Supported measures, in the order trec_eval prints them.
MEASURE_ORDER: tuple[str, ...] = ("runid", "num_q", "P", "recall", "ndcg_cut", "success")
_DEFAULT_CUTOFFS: dict[str, tuple[int, ...]] = {
    "P": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "recall": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "ndcg_cut": (5, 10, 15, 20, 30, 100, 200, 500, 1000),
    "success": (1, 5, 10),
}
#: trec_eval's stand-in ranking for a query missing from the run under ``-c``.
BOGUS_DOCNO = b"ceci_nest_pas_un_docno"

_BLOCK_BYTES = 1 << 20  # small blocks keep the work arrays in cache
_CELL_BUDGET = 4_000_000
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 32]] = True  # C isspace()
_HASH_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93], dtype=np.uint64
)

T = TypeVar("T")
R = TypeVar("R")
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
WordArray = NDArray[np.uint64]


class TrecFormatError(ValueError):
    """A malformed qrels or run file; the message names the file and line."""


# ============================================================================================ data


@dataclass(frozen=True, eq=False)
class _Docs:
    """Per-line query index, docno and docno hash.

    A docno is stored as 64-bit words holding its bytes first byte most significant, zero padded, so
    comparing the words compares the docnos in ``strcmp`` order.
    """

    qids: NDArray[np.bytes_]  # unique query ids, sorted in byte order
    qid_index: NDArray[np.int32]  # per line: index into qids
    words: WordArray  # (lines, words per docno)
    hashes: WordArray  # (lines,)

    def __len__(self) -> int:
        return int(self.qid_index.size)

    def docno(self, line: int) -> str:
        return _decode(_words_to_bytes(self.words[line]))


@dataclass(frozen=True, eq=False)
class TrecRun(_Docs):
    """A parsed TREC run: one entry per line, in file order."""

    scores: FloatArray = field(default_factory=lambda: np.zeros(0))
    run_id: str = ""
    name: str = "run"


@dataclass(frozen=True, eq=False)
class TrecQrels(_Docs):
    """Parsed TREC qrels: one entry per line, in file order."""

    grades: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    name: str = "qrels"


def _decode(raw: bytes) -> str:
    return raw.decode("utf-8", errors="surrogateescape")


def _words_to_bytes(words: WordArray) -> bytes:
    return np.ascontiguousarray(words, dtype=">u8").tobytes().rstrip(b"\0")


def _bytes_matrix_to_words(matrix: NDArray[np.uint8]) -> WordArray:
    """(n, W) zero padded byte rows -> (n, ceil(W/8)) native uint64 words in big-endian byte order."""
    n, width = matrix.shape
    padded_width = max(8, -(-width // 8) * 8)
    if padded_width != width:
        padded = np.zeros((n, padded_width), dtype=np.uint8)
        padded[:, :width] = matrix
        matrix = padded
    return np.ascontiguousarray(matrix).view(">u8").astype(np.uint64)


def _hash_words(words: WordArray) -> WordArray:
    """64-bit hash of each row, unchanged by trailing zero words (so widths need not agree)."""
    h = np.zeros(words.shape[0], dtype=np.uint64)
    term = np.empty_like(h)
    for j in range(words.shape[1]):
        multiplier = np.uint64(
            int(_HASH_MULTIPLIERS[j % _HASH_MULTIPLIERS.size]) * (2 * (j // 4) + 1) % 2**64
        )
        np.multiply(words[:, j], multiplier, out=term)
        h += term
    np.right_shift(h, np.uint64(31), out=term)
    h ^= term
    h *= np.uint64(0xBF58476D1CE4E5B9)
    np.right_shift(h, np.uint64(29), out=term)
    h ^= term
    h |= h == 0  # never 0: dense matrices use 0 for "no document here"
    return h


def _words_equal(a: WordArray, b: WordArray) -> NDArray[np.bool_]:
    """Row-wise equality of two word matrices of possibly different widths."""
    width = min(a.shape[1], b.shape[1])
    equal = (a[:, :width] == b[:, :width]).all(axis=1)
    if a.shape[1] > width:
        equal &= (a[:, width:] == 0).all(axis=1)
    if b.shape[1] > width:
        equal &= (b[:, width:] == 0).all(axis=1)
    return equal


def _strings_to_words(values: Sequence[str] | Sequence[bytes] | NDArray) -> WordArray:
    array = np.asarray([v.encode() if isinstance(v, str) else v for v in values], dtype=np.bytes_)
    if array.size == 0:
        return np.zeros((0, 1), dtype=np.uint64)
    width = array.dtype.itemsize
    matrix = np.frombuffer(array.tobytes(), dtype=np.uint8).reshape(array.size, width)
    return _bytes_matrix_to_words(matrix)


def _factorize(qids: Sequence[str] | NDArray) -> tuple[NDArray[np.bytes_], NDArray[np.int32]]:
    array = np.asarray([q.encode() if isinstance(q, str) else q for q in qids], dtype=np.bytes_)
    unique, inverse = np.unique(array, return_inverse=True)
    return unique, inverse.astype(np.int32).ravel()


def run_from_arrays(
    qids: Sequence[str], docnos: Sequence[str], scores: Sequence[float] | FloatArray, run_id: str = "run"
) -> TrecRun:
    """Build a :class:`TrecRun` from in-memory columns (one entry per retrieved document)."""
    score_array = np.asarray(scores, dtype=np.float64)
    if not len(qids) == len(docnos) == score_array.size:
        raise ValueError("qids, docnos and scores must have the same length")
    if np.isnan(score_array).any():
        raise ValueError("scores contain NaN")
    unique, index = _factorize(qids)
    words = _strings_to_words(docnos)
    return TrecRun(unique, index, words, _hash_words(words), score_array, run_id)


def qrels_from_arrays(
    qids: Sequence[str], docnos: Sequence[str], grades: Sequence[int] | IntArray
) -> TrecQrels:
    """Build :class:`TrecQrels` from in-memory columns (one entry per judgement)."""
    grade_array = np.asarray(grades)
    if not len(qids) == len(docnos) == grade_array.size:
        raise ValueError("qids, docnos and grades must have the same length")
    if (
        grade_array.size
        and not np.issubdtype(grade_array.dtype, np.integer)
        and not np.array_equal(grade_array, np.trunc(grade_array))
    ):
        raise ValueError("grades must be integers")
    unique, index = _factorize(qids)
    words = _strings_to_words(docnos)
    return TrecQrels(unique, index, words, _hash_words(words), grade_array.astype(np.int64))


# ============================================================================================ parsing


_PAD = 64  # readable slack after each block, so fixed-width token records never run off the end


class _LineError(Exception):
    """A malformed line, numbered within its block (the caller adds the lines of earlier blocks)."""

    def __init__(self, line: int, detail: str) -> None:
        super().__init__(detail)
        self.line = line
        self.detail = detail


def _last_newline(buffer: NDArray[np.uint8], low: int, high: int) -> int:
    """Index just after the last newline in ``buffer[low:high]``, or -1."""
    step = 1 << 16
    end = high
    while end > low:
        start = max(low, end - step)
        found = np.flatnonzero(buffer[start:end] == 10)
        if found.size:
            return start + int(found[-1]) + 1
        end = start
        step *= 4
    return -1


def _blocks(path: str | os.PathLike[str]) -> Iterator[tuple[NDArray[np.uint8], int]]:
    """Yield ``(buffer, end)``: ``buffer[:end]`` is whole lines, the last one ending in a newline.

    Every block has its own buffer (blocks may be parsed concurrently), extending at least ``_PAD``
    readable bytes past ``end``.
    """
    size = _BLOCK_BYTES + _PAD + 1
    buffer = np.empty(size, dtype=np.uint8)
    kept = 0  # bytes of an unfinished line carried over from the previous block
    with open(path, "rb") as handle:
        while True:
            if buffer.size - _PAD - 1 - kept < _BLOCK_BYTES // 2:  # a very long line: grow
                bigger = np.empty(2 * buffer.size, dtype=np.uint8)
                bigger[:kept] = buffer[:kept]
                buffer = bigger
            got = handle.readinto(memoryview(buffer)[kept : buffer.size - _PAD - 1])  # type: ignore[arg-type]
            if not got:
                if kept:
                    buffer[kept] = 10  # the last line has no newline
                    yield buffer, kept + 1
                return
            total = kept + got
            cut = _last_newline(buffer, kept, total)
            if cut < 0:
                kept = total
                continue
            following = np.empty(max(size, total - cut + _BLOCK_BYTES // 2 + _PAD + 1), dtype=np.uint8)
            kept = total - cut
            following[:kept] = buffer[cut:total]
            yield buffer, cut
            buffer = following


@dataclass
class _Block:
    """Tokens of one block: the fields of each content line."""

    buffer: NDArray[np.uint8]  # the block and at least _PAD readable bytes after it
    starts: IntArray  # token start offsets
    ends: IntArray  # token end offsets (exclusive)
    first: IntArray  # per content line: index of its first token
    line_numbers: IntArray  # per content line: 1-based line number in the block
    lines: int  # lines in the block (content or not)


class _Scratch(threading.local):
    """Per-thread reusable boolean work arrays (fresh big arrays cost page faults every block)."""

    def __init__(self) -> None:
        self.word = np.empty(0, dtype=bool)
        self.other = np.empty(0, dtype=bool)

    def get(self, size: int) -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
        if self.word.size < size:
            self.word = np.empty(size, dtype=bool)
            self.other = np.empty(size, dtype=bool)
        return self.word[:size], self.other[:size]


_SCRATCH = _Scratch()


def _tokenize(buffer: NDArray[np.uint8], end: int, columns: int, exact: bool) -> _Block:
    """Split ``buffer[:end]`` into whitespace separated tokens and check the columns of each line."""
    raw = buffer[:end]
    word, other = _SCRATCH.get(end)
    np.equal(raw, 10, out=other)
    newlines = np.flatnonzero(other)
    np.less(raw, 32, out=other)
    controls = np.count_nonzero(other)
    np.equal(raw, 9, out=other)
    if controls != newlines.size + np.count_nonzero(other):
        np.logical_not(_SPACE[raw], out=word)  # rare: \r, \v, \f or other control bytes
    else:
        np.greater(raw, 32, out=word)
    np.not_equal(word[1:], word[:-1], out=other[1:])
    other[0] = word[0]
    # the block ends with a newline, so every token ends: edges alternate start, end
    bounds = np.flatnonzero(other).reshape(-1, 2)
    starts = bounds[:, 0]
    ends = bounds[:, 1]
    n_lines = int(newlines.size)
    line_numbers = np.arange(1, n_lines + 1)
    if starts.size == columns * n_lines:
        # fast path: every line has exactly `columns` tokens and none is a comment
        first = np.arange(0, starts.size, columns)
        line_start = np.empty_like(newlines)
        line_start[0] = -1
        line_start[1:] = newlines[:-1]
        if (
            (starts[first] > line_start).all()
            and (ends[first + columns - 1] <= newlines).all()
            and (raw[starts[first]] != ord("#")).all()
        ):
            return _Block(buffer, starts, ends, first, line_numbers, n_lines)
    tokens_before = np.searchsorted(starts, newlines)
    first = np.empty_like(tokens_before)
    first[0] = 0
    first[1:] = tokens_before[:-1]
    counts = tokens_before - first
    content = counts > 0
    if content.any():
        content[content] = raw[starts[first[content]]] != ord("#")
    bad = content & ((counts != columns) if exact else (counts < columns))
    if bad.any():
        i = int(np.argmax(bad))
        expected = f"exactly {columns}" if exact else f"at least {columns}"
        layout = "qid iter docno grade" if exact else "qid Q0 docno rank score tag"
        raise _LineError(int(line_numbers[i]), f"expected {expected} columns ({layout}), found {counts[i]}")
    return _Block(buffer, starts, ends, first[content], line_numbers[content], n_lines)


def _gather(block: _Block, token: IntArray, multiple: int = 1) -> NDArray[np.uint8]:
    """(n, W) matrix with the bytes of the given tokens, zero padded; W is the longest token rounded
    up to a multiple of ``multiple``."""
    starts = block.starts[token]
    lengths = block.ends[token] - starts
    longest = int(lengths.max()) if lengths.size else 1
    width = -(-longest // multiple) * multiple
    buffer = block.buffer
    if width > _PAD:
        buffer = np.concatenate([buffer, np.zeros(width, dtype=np.uint8)])
    # overlapping fixed-width records starting at every byte; indexing copies `width` bytes each
    records = np.ndarray(shape=(buffer.size - width + 1,), dtype=f"V{width}", buffer=buffer, strides=(1,))
    matrix = records[starts].view(np.uint8).reshape(-1, width)
    matrix[:, longest:] = 0
    shortest = int(lengths.min()) if lengths.size else longest
    for j in range(shortest, longest):
        matrix[lengths <= j, j] = 0
    return matrix


def _short_keys(block: _Block, token: IntArray) -> WordArray | None:
    """Tokens of at most 7 bytes as exact integer keys (bytes and length), else None."""
    starts = block.starts[token]
    lengths = block.ends[token] - starts
    if lengths.size == 0 or int(lengths.max()) > 7:
        return None
    records = np.ndarray(shape=(block.buffer.size - 7,), dtype=">u8", buffer=block.buffer, strides=(1,))
    keys = records[starts].astype(np.uint64)
    keys >>= ((8 - lengths) * 8).astype(np.uint64)  # drop the bytes after the token
    keys <<= np.uint64(8)
    keys |= lengths.astype(np.uint64)
    return keys


def _as_strings(matrix: NDArray[np.uint8]) -> NDArray[np.bytes_]:
    return np.ascontiguousarray(matrix).view(f"S{matrix.shape[1]}").ravel()


_DIGITS_MAX = 15  # 10**15 < 2**53: mantissa and power of ten exact, so one division rounds correctly
_INT_TOKEN = re.compile(rb"[+-]?[0-9]+")


def _parse_numbers(matrix: NDArray[np.uint8], fraction: bool) -> tuple[FloatArray, NDArray[np.bool_]]:
    """Vectorised parse of plain decimals ``[+-]digits[.digits]`` with at most 15 digits.

    Returns the values (exactly what ``strtod`` gives: mantissa / 10**fraction_digits, both exact
    doubles, one correctly rounded division) and a mask of the tokens handled; the others need the
    slow path.
    """
    n, width = matrix.shape
    if fraction and n:
        uniform = _parse_uniform_decimals(matrix)
        if uniform is not None:
            return uniform, np.ones(n, dtype=bool)
    columns = np.ascontiguousarray(matrix.T)
    digit = (columns >= 48) & (columns <= 57)
    if n == 0:
        return np.zeros(0), np.zeros(0, dtype=bool)
    negative = columns[0] == 45
    allowed = digit | (columns == 0)
    allowed[0] |= negative | (columns[0] == 43)
    dot = columns == 46
    if fraction:
        allowed |= dot
        ok = allowed.all(axis=0) & (np.count_nonzero(dot, axis=0) <= 1)
    else:
        ok = allowed.all(axis=0)
    n_digits = np.count_nonzero(digit, axis=0)
    ok &= (n_digits >= 1) & (n_digits <= _DIGITS_MAX)
    mantissa = np.zeros(n, dtype=np.int64)
    decimals = np.zeros(n, dtype=np.int64)
    seen_dot = np.zeros(n, dtype=bool)
    for j in range(width):
        np.copyto(mantissa, mantissa * 10 + (columns[j].astype(np.int64) - 48), where=digit[j])
        if fraction:
            seen_dot |= dot[j]
            decimals += digit[j] & seen_dot
    values = mantissa.astype(np.float64)
    if fraction:
        values /= np.float64(10.0) ** decimals
    np.negative(values, out=values, where=negative)
    return values, ok


def _parse_uniform_decimals(matrix: NDArray[np.uint8]) -> FloatArray | None:
    """Fast path for a block whose scores share one layout, ``digits.digits`` with the dot in the same
    column and no padding (e.g. everything printed with ``%.6f`` and the same integer width)."""
    width = matrix.shape[1]
    dots = np.flatnonzero(matrix[0] == 46)
    if width > _DIGITS_MAX + 1 or dots.size != 1 or (matrix[:, -1] == 0).any():
        return None
    dot = int(dots[0])
    digits = np.delete(matrix, dot, axis=1).astype(np.float64) - 48.0
    if not (matrix[:, dot] == 46).all() or (digits < 0).any() or (digits > 9).any():
        return None
    # every partial sum is an integer below 2**53, so the product is exact in any summation order
    weights = 10.0 ** np.arange(width - 2, -1, -1)
    mantissa: FloatArray = digits @ weights
    return mantissa / np.float64(10.0 ** (width - 1 - dot))


def _slow_float(token: bytes) -> float | None:
    text = token.decode("ascii", errors="replace")
    if "_" in text:
        return None
    try:
        return float(text)
    except ValueError:
        return None


def _parse_scores(block: _Block, token: IntArray) -> FloatArray:
    matrix = _gather(block, token)
    values, ok = _parse_numbers(matrix, fraction=True)
    for i in np.flatnonzero(~ok):
        raw = _as_strings(matrix[i : i + 1])[0]
        value = _slow_float(raw)
        if value is None or math.isnan(value):
            raise _LineError(int(block.line_numbers[i]), f"score {_decode(raw)!r} is not a number")
        values[i] = value
    return values


def _parse_grades(block: _Block, token: IntArray) -> IntArray:
    matrix = _gather(block, token)
    values, ok = _parse_numbers(matrix, fraction=False)
    grades = values.astype(np.int64)
    for i in np.flatnonzero(~ok):
        raw = _as_strings(matrix[i : i + 1])[0]
        if not _INT_TOKEN.fullmatch(raw) or abs(int(raw)) >= 2**62:
            raise _LineError(int(block.line_numbers[i]), f"grade {_decode(raw)!r} is not an integer")
        grades[i] = int(raw)
    return grades


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
    block = _tokenize(buffer, end, 6 if run else 4, exact=not run)
    first = block.first
    if first.size == 0:
        none = np.zeros(0, dtype=np.int64)
        no_words = np.zeros((0, 1), dtype=np.uint64)
        return _Parsed(block.lines, end, np.zeros(0, "S1"), none, no_words, no_words[:, 0], none, None)
    keys: NDArray = _short_keys(block, first)  # type: ignore[assignment]
    if keys is None:  # long query ids: compare the strings themselves
        keys = _as_strings(_gather(block, first))
    change = np.ones(keys.size, dtype=bool)
    np.not_equal(keys[1:], keys[:-1], out=change[1:])
    run_starts = np.flatnonzero(change)
    qid_runs = _as_strings(_gather(block, first[run_starts]))
    run_lengths = np.diff(np.append(run_starts, keys.size))
    words = _gather(block, first + 2, multiple=8).view(">u8").astype(np.uint64)
    values: NDArray = _parse_scores(block, first + 4) if run else _parse_grades(block, first + 3)
    run_id = None
    if run:
        last = int(first[-1] + 5)
        run_id = _decode(buffer[block.starts[last] : block.ends[last]].tobytes())
    return _Parsed(block.lines, end, qid_runs, run_lengths, words, _hash_words(words), values, run_id)


def _ordered_map(work: Callable[[T], R], items: Iterator[T], threads: int) -> Iterator[R]:
    """``map(work, items)`` on a thread pool, results in order, a bounded number in flight."""
    if threads <= 1:
        yield from map(work, items)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        pending: deque[Future[R]] = deque()
        for item in items:
            pending.append(pool.submit(work, item))
            if len(pending) > 2 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


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


@contextlib.contextmanager
def _small_pages() -> Iterator[None]:
    """Turn off numpy's ``madvise(MADV_HUGEPAGE)`` for new arrays while parsing / evaluating.

    With transparent huge pages in ``madvise`` mode the kernel may compact memory synchronously when
    a fresh huge page is first touched; filling the column arrays was 2-3x slower that way on the
    benchmark machine.  numpy's switch is process wide, so it is restored afterwards.
    """
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    setter = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    if setter is None:
        yield
        return
    previous = setter(False)
    try:
        yield
    finally:
        setter(previous)


def _read(path: str | os.PathLike[str], name: str, run: bool, threads: int | None) -> tuple[tuple, str]:
    """Parse a file block by block; returns ``_DocsBuilder.finish()`` and the run id."""
    builder = _DocsBuilder(os.path.getsize(path), np.float64 if run else np.int64)
    run_id = ""
    lines_before = 0  # lines of the blocks already collected
    threads = default_threads() if threads is None else max(1, threads)
    with _small_pages():
        try:
            for parsed in _ordered_map(
                lambda item: _parse_block(item[0], item[1], run), _blocks(path), threads
            ):
                builder.add(parsed)
                lines_before += parsed.lines
                run_id = parsed.run_id if parsed.run_id is not None else run_id
        except _LineError as error:
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


# ============================================================================================ measures


@dataclass(frozen=True)
class Measure:
    """A requested measure and its cutoffs (empty for ``runid`` / ``num_q``)."""

    name: str
    cutoffs: tuple[int, ...] = ()

    @property
    def value_names(self) -> list[str]:
        return [f"{self.name}_{c}" for c in self.cutoffs]


def _atol(text: str) -> int:
    match = re.match(r"\s*([+-]?\d+)", text)
    return int(match.group(1)) if match else 0


def parse_measures(specs: Sequence[str]) -> list[Measure]:
    """Parse ``-m`` arguments (``ndcg_cut.10,20``, ``success``, ``runid`` ...) trec_eval style.

    A name without parameters uses trec_eval's default cutoffs; when a measure is given several
    times, the first parameter list wins.  Returns measures in trec_eval's printing order.
    """
    params: dict[str, str | None] = {}
    for spec in specs:
        name, dot, given = spec.partition(".")
        if name not in MEASURE_ORDER:
            raise ValueError(f"unknown measure {name!r}; supported: {', '.join(MEASURE_ORDER)}")
        if dot and not given:
            raise ValueError(f"improper measure {spec!r}: no parameters after '.'")
        if params.get(name) is None:
            params[name] = given if dot else None
    measures = []
    for name in MEASURE_ORDER:
        if name not in params:
            continue
        if name in ("runid", "num_q"):
            measures.append(Measure(name))
            continue
        param = params[name]
        cutoffs: tuple[int, ...]
        if param is None:
            cutoffs = _DEFAULT_CUTOFFS[name]
        else:
            values = sorted(_atol(p) for p in param.split(","))
            if values[0] <= 0:
                raise ValueError(f"measure {name}.{param}: cutoffs must be positive")
            if len(set(values)) != len(values):
                raise ValueError(f"measure {name}.{param}: duplicate cutoffs")
            cutoffs = tuple(values)
        measures.append(Measure(name, cutoffs))
    return measures


# ============================================================================================ evaluation


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


@dataclass
class _Source:
    """One file's lines grouped by query (query = index into the qrels' query ids)."""

    docs: _Docs
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


def _group(docs: _Docs, qid_index: NDArray, n_queries: int) -> _Source:
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
        return _Source(docs, base, zeros, zeros.copy())
    block_starts = np.concatenate([[0], np.flatnonzero(queries[1:] != queries[:-1]) + 1])
    block_queries = queries[block_starts].astype(np.int64)
    block_counts = np.diff(np.append(block_starts, n))
    counts = np.zeros(n_queries, dtype=np.int64)
    np.add.at(counts, block_queries, block_counts)
    if np.bincount(block_queries, minlength=n_queries).max() <= 1:  # one block per query
        starts = np.zeros(n_queries, dtype=np.int64)
        starts[block_queries] = block_starts
        return _Source(docs, base, starts, counts)
    order = np.argsort(block_queries, kind="stable")
    lines = _ranges(block_starts[order], block_counts[order])
    return _Source(docs, lines if base is None else base[lines], np.cumsum(counts) - counts, counts)


@dataclass
class _Layout:
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


def _layout(source: _Source, queries: IntArray) -> _Layout:
    counts = source.counts[queries]
    starts = source.starts[queries]
    width = int(counts.max())
    uniform = bool((counts == width).all())
    if uniform and source.lines is None and bool((np.diff(starts) == width).all()):
        lo = int(starts[0])
        ids = np.arange(lo, lo + width * queries.size, dtype=np.int64).reshape(queries.size, width)
        return _Layout(ids, None, slice(lo, lo + width * queries.size))
    positions = starts[:, None] + np.arange(width)
    valid = None if uniform else np.arange(width) < counts[:, None]
    if valid is not None:
        positions = np.where(valid, positions, starts[:, None])
    ids = positions if source.lines is None else source.lines[positions]
    return _Layout(ids, valid, None)


def _check_duplicates(
    docs: _Docs, hashes: WordArray, layout: _Layout, what: str, ordered: WordArray | None = None
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
            value = _words_to_bytes(docs.words[i])
            if value in seen:
                qid = _decode(bytes(docs.qids[docs.qid_index[ids[0]]]))
                raise TrecFormatError(f"{what}: query {qid} lists document {_decode(value)} more than once")
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


def _evaluate_chunk(
    run: _Source, qrels: _Source, queries: IntArray, depth: int, relevance_level: int
) -> tuple[FloatArray, FloatArray, IntArray]:
    """Relevance of the top ``depth`` documents, sorted ideal gains and number relevant per query."""
    # ---- run: dense -score matrix, pick and order the top documents
    r_layout = _layout(run, queries)
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
    q_layout = _layout(qrels, queries)
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
        same = _words_equal(run_words, np.take(qrels.docs.words, q_lines, axis=0))
        if not same.all():  # a hash collision: look for the true match the slow way
            for x in np.flatnonzero(~same).tolist():
                r = int(i[x])
                cols = np.flatnonzero(q_valid[r])
                target = np.broadcast_to(run_words[x], (cols.size, run_words.shape[1]))
                hits = cols[_words_equal(target, np.take(qrels.docs.words, q_layout.ids[r, cols], axis=0))]
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


def _chunk_bounds(run_counts: IntArray, qrels_counts: IntArray, depth: int) -> Iterator[tuple[int, int]]:
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


def _values_for(
    measure: Measure, labels: FloatArray, ideal: FloatArray, num_rel: IntArray, level: int
) -> dict[str, FloatArray]:
    out: dict[str, FloatArray] = {}
    n, depth = labels.shape
    if measure.name == "ndcg_cut":
        dcg = dcg_prefix(np.where(labels > 0, labels, 0.0))
        idcg = dcg_prefix(ideal)
        for cutoff in measure.cutoffs:
            top = dcg[:, min(cutoff, depth) - 1] if depth else np.zeros(n)
            best = idcg[:, min(cutoff, idcg.shape[1]) - 1] if idcg.shape[1] else np.zeros(n)
            # trec_eval divides only when the ideal DCG is positive (else the DCG is 0 anyway)
            out[f"ndcg_cut_{cutoff}"] = np.divide(top, best, out=top.copy(), where=best > 0)
        return out
    found = np.cumsum(labels >= level, axis=1)  # NaN (past the end) is never relevant
    for cutoff in measure.cutoffs:
        hits = found[:, min(cutoff, depth) - 1].astype(np.float64) if depth else np.zeros(n)
        if measure.name == "success":
            value = (hits > 0).astype(np.float64)
        elif measure.name == "P":
            value = hits / cutoff
        else:  # recall
            value = np.divide(hits, num_rel, out=np.zeros(n), where=num_rel > 0)
        out[f"{measure.name}_{cutoff}"] = value
    return out


def default_threads() -> int:
    """Worker threads for parsing and evaluation: ``RANK_TRAINER_METRICS_THREADS`` or the CPU count
    (at most 4).  numpy releases the GIL in its loops, so blocks and chunks run truly in parallel."""
    configured = os.environ.get("RANK_TRAINER_METRICS_THREADS")
    if configured:
        return max(1, int(configured))
    return max(1, min(4, os.cpu_count() or 1))


def _run_parallel(work: Callable[[T], None], items: Sequence[T], threads: int | None) -> None:
    threads = default_threads() if threads is None else max(1, threads)
    if threads == 1 or len(items) < 2:
        for item in items:
            work(item)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for future in [pool.submit(work, item) for item in items]:
            future.result()


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
    with _small_pages():
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
    run_source = _group(run, run_query, n_queries)
    del run_query
    qrels_source = _group(qrels, qrels.qid_index, n_queries)

    has_run = run_source.counts > 0
    evaluated = np.arange(n_queries) if complete else np.flatnonzero(has_run)
    if evaluated.size == 0:
        raise ValueError("No queries with both results and relevance info")

    bogus_words = _strings_to_words([BOGUS_DOCNO])
    bogus = TrecRun(
        qrels.qids,
        np.zeros(1, np.int32),
        bogus_words,
        _hash_words(bogus_words),
        np.ones(1),
        run.run_id,
        run.name,
    )
    # every missing query "retrieves" line 0 of the bogus run
    bogus_source = _Source(
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
            source: _Source = source,
            queries: IntArray = queries,
            subset: IntArray = subset,
        ) -> None:
            start, stop = bounds
            labels, ideal, num_rel = _evaluate_chunk(
                source, qrels_source, queries[start:stop], depth, relevance_level
            )
            for measure in value_measures:
                for name, value in _values_for(measure, labels, ideal, num_rel, relevance_level).items():
                    values[name][subset[start:stop]] = value

        chunks = list(_chunk_bounds(source.counts[queries], qrels_source.counts[queries], depth))
        _run_parallel(work, chunks, threads)
    try:
        qids = qrels.qids[evaluated].astype(str).tolist()
    except UnicodeDecodeError:
        qids = [_decode(bytes(q)) for q in qrels.qids[evaluated]]
    return TrecEvaluation(qids=qids, measures=parsed, values=values, run_id=run.run_id)


def format_evaluation(result: TrecEvaluation, per_query: bool = False) -> list[str]:
    """trec_eval's output lines: per query (if ``per_query``) then the ``all`` summary."""
    lines: list[str] = []
    value_measures = [m for m in result.measures if m.cutoffs]
    if per_query:
        columns = [(name, result.values[name].tolist()) for m in value_measures for name in m.value_names]
        for i, qid in enumerate(result.qids):
            lines.extend(f"{name:<22}\t{qid}\t{values[i]:6.4f}" for name, values in columns)
    for measure in result.measures:
        if measure.name == "runid":
            lines.append(f"{'runid':<22}\tall\t{result.run_id}")
        elif measure.name == "num_q":
            lines.append(f"{'num_q':<22}\tall\t{result.num_q}")
        else:
            lines.extend(f"{name:<22}\tall\t{result.mean(name):6.4f}" for name in measure.value_names)
    return lines


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
