"""A read-only table of strings that lives in memory-mapped files: the BM25 index's answer ids and terms.

A million answers' ids and a few million terms as Python lists and dicts cost several hundred MB in
every process that ranks (issue 37); as arrays mapped from disk, the processes share the page cache. The
strings are one UTF-8 blob with offsets (string ``i`` is ``blob[offsets[i]:offsets[i + 1]]``), and a
string is found by the 64-bit BLAKE2b hash of its bytes, in a sorted array of hashes beside each hash's
position (``order``), then compared byte for byte: an exact lookup in O(log n).
"""

from __future__ import annotations

import hashlib
import operator
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import overload

import numpy as np

PARTS = ("blob", "offsets", "hashes", "order")


def _hash(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little")


def load_array(path: Path) -> np.ndarray:
    """The array in ``path``, mapped read-only (an empty array cannot be mapped: it is read)."""
    try:
        return np.load(path, mmap_mode="r")
    except ValueError:
        return np.load(path)


class StringTable(Sequence[str]):
    """Strings by position (``table[i]``) and positions by string (``table.find(s)``)."""

    def __init__(self, blob: np.ndarray, offsets: np.ndarray, hashes: np.ndarray, order: np.ndarray) -> None:
        self.blob, self.offsets, self.hashes, self.order = blob, offsets, hashes, order

    @classmethod
    def of(cls, strings: Iterable[str]) -> StringTable:
        encoded = [s.encode() for s in strings]
        offsets = np.zeros(len(encoded) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(e) for e in encoded])
        hashes = np.fromiter((_hash(e) for e in encoded), dtype=np.uint64, count=len(encoded))
        order = np.argsort(hashes, kind="stable")
        blob = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        return cls(blob, offsets, hashes[order], order.astype(np.int64))

    def save(self, directory: Path, name: str) -> None:
        for part in PARTS:
            np.save(directory / f"{name}-{part}.npy", getattr(self, part))

    @classmethod
    def load(cls, directory: Path, name: str) -> StringTable:
        return cls(*(load_array(directory / f"{name}-{part}.npy") for part in PARTS))

    def __len__(self) -> int:
        return len(self.offsets) - 1

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        position = operator.index(i)
        if position < 0:
            position += len(self)
        if not 0 <= position < len(self):
            raise IndexError(i)
        return bytes(self.blob[self.offsets[position] : self.offsets[position + 1]]).decode()

    def __iter__(self) -> Iterator[str]:
        data, offsets = bytes(self.blob), self.offsets.tolist()  # one copy, not one per string
        return (data[offsets[i] : offsets[i + 1]].decode() for i in range(len(self)))

    def __contains__(self, value: object) -> bool:
        return isinstance(value, str) and self.find(value) is not None

    def __eq__(self, other: object) -> bool:
        """Equal to a list or table of the same strings in the same order, like the list it replaces."""
        if isinstance(other, StringTable | list | tuple):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def find(self, value: str) -> int | None:
        """The position of ``value``, or None when the table does not hold it."""
        data = value.encode()
        key = np.uint64(_hash(data))
        at = int(np.searchsorted(self.hashes, key))
        while at < len(self.hashes) and self.hashes[at] == key:
            position = int(self.order[at])
            if bytes(self.blob[self.offsets[position] : self.offsets[position + 1]]) == data:
                return position
            at += 1
        return None


class Positions:
    """A table's strings → positions, read like the dict it replaces (``get``, ``[]``, ``in``)."""

    def __init__(self, table: StringTable) -> None:
        self.table = table

    def get(self, value: str, default: int | None = None) -> int | None:
        position = self.table.find(value)
        return default if position is None else position

    def __getitem__(self, value: str) -> int:
        position = self.table.find(value)
        if position is None:
            raise KeyError(value)
        return position

    def __contains__(self, value: object) -> bool:
        return value in self.table

    def __len__(self) -> int:
        return len(self.table)
