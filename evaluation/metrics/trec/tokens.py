"""Tokenizer of TREC files: 1 MB blocks of whole lines, whitespace separated tokens, their bytes.

A file is read in blocks of about ``_BLOCK_BYTES`` (small blocks keep the work arrays in cache), each in
its own buffer so that blocks can be tokenised on several threads (numpy releases the GIL).  Tokens are
split with vectorised byte comparisons, no Python loop per line; ``#`` starts a comment line, blank lines
are ignored, whitespace is C's ``isspace``.  A bad line raises :class:`LineError` numbered within its
block; :mod:`.files` turns it into a ``TrecFormatError`` naming the file and line.
"""

from __future__ import annotations

import math
import os
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .decimals import INT_TOKEN, parse_numbers, slow_float
from .docs import FloatArray, IntArray, WordArray, decode

__all__ = [
    "Block",
    "LineError",
    "as_strings",
    "blocks",
    "gather",
    "parse_grades",
    "parse_scores",
    "short_keys",
    "tokenize",
]

_BLOCK_BYTES = 1 << 20  # small blocks keep the work arrays in cache
_PAD = 64  # readable slack after each block, so fixed-width token records never run off the end
_SPACE = np.zeros(256, dtype=bool)
_SPACE[[9, 10, 11, 12, 13, 32]] = True  # C isspace()


class LineError(Exception):
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


def blocks(path: str | os.PathLike[str]) -> Iterator[tuple[NDArray[np.uint8], int]]:
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
class Block:
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


def tokenize(buffer: NDArray[np.uint8], end: int, columns: int, exact: bool) -> Block:
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
            return Block(buffer, starts, ends, first, line_numbers, n_lines)
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
        raise LineError(int(line_numbers[i]), f"expected {expected} columns ({layout}), found {counts[i]}")
    return Block(buffer, starts, ends, first[content], line_numbers[content], n_lines)


def gather(block: Block, token: IntArray, multiple: int = 1) -> NDArray[np.uint8]:
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


def short_keys(block: Block, token: IntArray) -> WordArray | None:
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


def as_strings(matrix: NDArray[np.uint8]) -> NDArray[np.bytes_]:
    """(n, W) zero padded byte rows -> n byte strings."""
    return np.ascontiguousarray(matrix).view(f"S{matrix.shape[1]}").ravel()


def parse_scores(block: Block, token: IntArray) -> FloatArray:
    """The given tokens as 64-bit floats, exactly as ``strtod``; NaN or not a number: :class:`LineError`."""
    matrix = gather(block, token)
    values, ok = parse_numbers(matrix, fraction=True)
    for i in np.flatnonzero(~ok):
        raw = as_strings(matrix[i : i + 1])[0]
        value = slow_float(raw)
        if value is None or math.isnan(value):
            raise LineError(int(block.line_numbers[i]), f"score {decode(raw)!r} is not a number")
        values[i] = value
    return values


def parse_grades(block: Block, token: IntArray) -> IntArray:
    """The given tokens as integers; anything else: :class:`LineError`."""
    matrix = gather(block, token)
    values, ok = parse_numbers(matrix, fraction=False)
    grades = values.astype(np.int64)
    for i in np.flatnonzero(~ok):
        raw = as_strings(matrix[i : i + 1])[0]
        if not INT_TOKEN.fullmatch(raw) or abs(int(raw)) >= 2**62:
            raise LineError(int(block.line_numbers[i]), f"grade {decode(raw)!r} is not an integer")
        grades[i] = int(raw)
    return grades
