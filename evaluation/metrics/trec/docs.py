"""Parsed qrels and runs in memory: one row per file line, docnos as 64-bit words, and their hashes.

:class:`TrecRun` and :class:`TrecQrels` come from :mod:`.files` (reading files) or from
:func:`run_from_arrays` / :func:`qrels_from_arrays` (in-memory columns).  A docno is kept as big-endian
64-bit words, zero padded, so comparing words compares docnos in ``strcmp`` order; its 64-bit hash
(:func:`hash_words`) only narrows a search, every hash match is verified byte for byte
(:func:`words_equal`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "Docs",
    "FloatArray",
    "IntArray",
    "TrecFormatError",
    "TrecQrels",
    "TrecRun",
    "WordArray",
    "decode",
    "hash_words",
    "qrels_from_arrays",
    "run_from_arrays",
    "strings_to_words",
    "words_equal",
    "words_to_bytes",
]

_HASH_MULTIPLIERS = np.array(
    [0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93], dtype=np.uint64
)
IntArray = NDArray[np.int64]
FloatArray = NDArray[np.float64]
WordArray = NDArray[np.uint64]


class TrecFormatError(ValueError):
    """A malformed qrels or run file; the message names the file and line."""


@dataclass(frozen=True, eq=False)
class Docs:
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
        return decode(words_to_bytes(self.words[line]))


@dataclass(frozen=True, eq=False)
class TrecRun(Docs):
    """A parsed TREC run: one entry per line, in file order."""

    scores: FloatArray = field(default_factory=lambda: np.zeros(0))
    run_id: str = ""
    name: str = "run"


@dataclass(frozen=True, eq=False)
class TrecQrels(Docs):
    """Parsed TREC qrels: one entry per line, in file order."""

    grades: IntArray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    name: str = "qrels"


def decode(raw: bytes) -> str:
    """A query id or docno as text (bytes that are not UTF-8 kept as surrogates)."""
    return raw.decode("utf-8", errors="surrogateescape")


def words_to_bytes(words: WordArray) -> bytes:
    """One docno's words back to its bytes."""
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


def hash_words(words: WordArray) -> WordArray:
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


def words_equal(a: WordArray, b: WordArray) -> NDArray[np.bool_]:
    """Row-wise equality of two word matrices of possibly different widths."""
    width = min(a.shape[1], b.shape[1])
    equal = (a[:, :width] == b[:, :width]).all(axis=1)
    if a.shape[1] > width:
        equal &= (a[:, width:] == 0).all(axis=1)
    if b.shape[1] > width:
        equal &= (b[:, width:] == 0).all(axis=1)
    return equal


def strings_to_words(values: Sequence[str] | Sequence[bytes] | NDArray) -> WordArray:
    """Docnos (text or bytes) -> (n, words) big-endian word rows."""
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
    words = strings_to_words(docnos)
    return TrecRun(unique, index, words, hash_words(words), score_array, run_id)


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
    words = strings_to_words(docnos)
    return TrecQrels(unique, index, words, hash_words(words), grade_array.astype(np.int64))
