"""The vectors of an engine's candidates, kept in index order where a read is cheap (issue 35 §4).

``CandidateVectors`` (``rankers.semantic``) keeps one file per text under ``EMBEDDINGS_DIR/returned/``:
the store every build and reranker shares, found by text hash. Reading 50 of them (a rerank of K = 50
answers a process meets for the first time) is 50 opens and parses. Beside them, one state of a
collection (its index fingerprint) has one matrix in index order, memory-mapped and shared by every
process that serves or trains on it:

* ``collection-<id>/candidates-<fingerprint>.npy``: (answers × 386) uint32, a sparse file (1.5 kB per
  answer on disk only once written): each row's vector (its float32s' bits, copied as integers), then in
  its last two columns (read as one uint64, ``KEY``) the first 8 bytes of the text hash of that vector's text (0: none yet). One file, so
  that a process never pairs one state's keys with another file's vectors.

A row counts only when its key is the text hash of the answer at that position now, so a row is never
used for another text (a fingerprint is made of ids and dates, not texts). A writer puts the row first,
then its key; a reader reads the key first, so it never takes a row being written. Two processes writing
one row write the same bytes (the same text, the same model). Creating the files is atomic (made under a
temporary name, then linked into place; the loser of a race opens the winner's); a new state's store
removes the collection's others. Where the directory cannot be written, ``open_store`` returns None and
vectors come from the per-text files alone.
"""

from __future__ import annotations

import logging
import os
import threading
from pathlib import Path

import numpy as np

from rankers.embedding import DIMENSION

logger = logging.getLogger(__name__)


def text_key(text_hash: str) -> int:
    """The uint64 a row's key holds for a text of this ``text_hash`` (hex): its first 8 bytes, never 0."""
    return int(text_hash[:16], 16) | 1


KEY = slice(DIMENSION, DIMENSION + 2)  # the row's key: two uint32 columns read as one uint64


class CandidateStore:
    """One collection state's candidate vectors in index order (see the module docstring). Thread-safe."""

    def __init__(self, rows: np.memmap) -> None:
        self.rows = rows
        self._lock = threading.Lock()

    def read(self, positions: np.ndarray, expected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(vectors, found): the stored vectors of ``positions`` and whether each is the one of the text
        whose key is in ``expected`` (vectors not found are zeros)."""
        # The keys first: a row is complete before its key is written.
        keys = np.ascontiguousarray(self.rows[positions, KEY]).view(np.uint64).ravel()
        found = keys == expected
        vectors = np.zeros((len(positions), DIMENSION), dtype=np.float32)
        if found.any():
            vectors[found] = np.ascontiguousarray(self.rows[positions[found], :DIMENSION]).view(np.float32)
        return vectors, found

    def write(self, positions: np.ndarray, keys: np.ndarray, vectors: np.ndarray) -> None:
        """Keep ``vectors`` at ``positions`` (their texts' ``keys``): the vectors, then their keys."""
        if not len(positions):
            return
        with self._lock:
            self.rows[positions, :DIMENSION] = np.ascontiguousarray(vectors, dtype=np.float32).view(np.uint32)
            self.rows[positions, KEY] = (
                np.ascontiguousarray(keys, dtype=np.uint64).view(np.uint32).reshape(-1, 2)
            )


def _open_or_create(path: Path, dtype: type, shape: tuple[int, ...]) -> np.memmap:
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        created = np.lib.format.open_memmap(tmp, mode="w+", dtype=dtype, shape=shape)
        del created  # zeros, sparse: nothing written but the header
        try:
            os.link(tmp, path)  # fails if another process made it first: then theirs is the one
        except FileExistsError:
            pass
        finally:
            tmp.unlink(missing_ok=True)
        _forget_other_states(path)
    store = np.load(path, mmap_mode="r+")
    if store.shape != shape or store.dtype != dtype:
        raise ValueError(f"{path} has shape {store.shape} and dtype {store.dtype}, expected {shape} {dtype}")
    return store


def _forget_other_states(path: Path) -> None:
    """Remove the stores of the collection's other states: a new state's positions are other answers'. A
    process still serving an old state keeps its mapping (the file goes when it closes it)."""
    for other in path.parent.glob("candidates-*.npy"):
        if other.name != path.name:
            other.unlink(missing_ok=True)


def open_store(directory: Path, fingerprint: str, size: int) -> CandidateStore | None:
    """The store of the collection state ``fingerprint`` (``size`` answers) under ``directory``, created
    empty when missing; None when it cannot be made or read (vectors then come from the per-text files)."""
    try:
        rows = _open_or_create(directory / f"candidates-{fingerprint}.npy", np.uint32, (size, DIMENSION + 2))
    except (OSError, ValueError) as exc:
        logger.warning("candidate vectors store under %s not usable: %s", directory, exc)
        return None
    return CandidateStore(rows)
