"""The vectors of the answers an engine returned (``CandidateVectors``): kept one file per text and in
the collection state's index-ordered store, encoded when first met."""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterable
from pathlib import Path
from typing import cast

import numpy as np
from django.conf import settings

from rankers.candidate_store import CandidateStore, open_store, text_key
from rankers.embedding import (
    DIMENSION,
    text_hash,
)
from rankers.index import CollectionIndex
from rankers.semantic.encoding import BATCH_SIZE, _encoder, _questions, _vectors, answer_vectors
from rankers.semantic.files import _previous, _returned_file, _save, embeddings_dir

RETURNED_CACHE_SIZE = 50_000  # vectors held in memory (1.5 kB each)
_returned: OrderedDict[str, np.ndarray] = OrderedDict()
_returned_lock = threading.Lock()
# The index-ordered candidate stores (rankers.candidate_store) opened, by (directory, fingerprint).
_stores: dict[tuple[str, str], CandidateStore | None] = {}
_stores_lock = threading.Lock()


def vectors_keep(*, keys: list[str], vectors: np.ndarray, root: Path | None = None) -> int:
    """Keep vectors computed elsewhere (``keys``: their texts' ``text_hash``) in the one-file-per-text store
    under ``root`` (default ``EMBEDDINGS_DIR``), where builds and engine rerankers find them by text hash.
    A text already kept is left as it is. Returns how many were added."""
    if vectors.shape != (len(keys), DIMENSION):
        raise ValueError(f"vectors have shape {vectors.shape}, expected {(len(keys), DIMENSION)}")
    added = 0
    for key, vector in zip(keys, vectors, strict=True):
        path = _returned_file(key, root)
        if not path.exists():
            _save(path, np.asarray(vector, dtype=np.float32))
            added += 1
    return added


class CandidateVectors:
    """Vectors of the answers a first stage (a search engine) returned, for rerankers of an engine.

    Only answers an engine actually returns are encoded, when first met, and kept by text hash in
    memory and as one file each under ``EMBEDDINGS_DIR/returned/`` (so a million-answer index needs
    only the vectors of what questions retrieve, and a restarted server finds them again), and in the
    collection state's index-ordered store (``rankers.candidate_store``), where the 50 candidates of a
    rerank are one read, in any process, after a restart too. When the collection's full matrix is
    built, its rows are used; a text that another built matrix holds is taken from there. Safe to share
    between threads.
    """

    def __init__(self, *, index: CollectionIndex, texts: list[str]) -> None:
        self.index = index
        self.texts = texts
        self._keys: dict[int, str] = {}
        self._built: dict[bytes, np.ndarray] | None = None

    def _key(self, position: int) -> str:
        key = self._keys.get(position)
        if key is None:
            key = self._keys[position] = text_hash(self.texts[position])
        return key

    def _lookup(self, key: str) -> np.ndarray | None:
        with _returned_lock:
            vector = _returned.get(key)
            if vector is not None:
                _returned.move_to_end(key)
                return vector
        path = _returned_file(key)
        if not path.exists():
            return None
        vector = np.load(path)
        self._keep(key, vector)
        return vector

    @staticmethod
    def _keep(key: str, vector: np.ndarray) -> None:
        with _returned_lock:
            _returned[key] = vector
            while len(_returned) > RETURNED_CACHE_SIZE:
                _returned.popitem(last=False)

    def _store(self) -> CandidateStore | None:
        directory = embeddings_dir(collection_id=self.index.collection_id)
        key = (str(directory), self.index.fingerprint)
        if key not in _stores:
            with _stores_lock:
                if key not in _stores:
                    _stores[key] = open_store(directory, self.index.fingerprint, self.index.size)
        return _stores[key]

    def _vectors(self, positions: np.ndarray, *, encode: bool) -> np.ndarray | None:
        """The candidates' vectors: the index-ordered store's rows (one read for all of them), then for the
        rest the memory cache, the per-text files, a built matrix and (``encode``) the model, in that
        order; what the store lacked is written to it. None when one is missing and ``encode`` is False."""
        full = answer_vectors(index=self.index)
        if full is not None:
            return np.asarray(full[positions])
        if not len(positions):
            return np.zeros((0, DIMENSION), np.float32)
        keys = [self._key(int(p)) for p in positions]
        expected = np.array([text_key(key) for key in keys], dtype=np.uint64)
        store = self._store()
        if store is not None:
            rows, found = store.read(positions, expected)
        else:
            rows, found = np.zeros((len(positions), DIMENSION), np.float32), np.zeros(len(positions), bool)
        if found.all():
            return rows
        rest = np.flatnonzero(~found)
        vectors = self._elsewhere(positions[rest], [keys[i] for i in rest], encode=encode)
        if vectors is None:
            return None
        rows[rest] = vectors
        if store is not None:
            store.write(positions[rest], expected[rest], vectors)
        return rows

    def cached(self, positions: np.ndarray) -> np.ndarray | None:
        """The candidates' vectors if every one is known already, else None (nothing is encoded)."""
        return self._vectors(positions, encode=False)

    def of(self, positions: np.ndarray) -> np.ndarray:
        """The candidates' vectors, encoding (and keeping) the ones met for the first time.

        Raises EmbeddingUnavailable when the model cannot be loaded.
        """
        return cast(np.ndarray, self._vectors(positions, encode=True))

    def _elsewhere(self, positions: np.ndarray, keys: list[str], *, encode: bool) -> np.ndarray | None:
        """The vectors of texts the store lacks: memory, per-text files, built matrices, then the model."""
        found: dict[str, np.ndarray | None] = {key: self._lookup(key) for key in dict.fromkeys(keys)}
        missing = [key for key, vector in found.items() if vector is None]
        if missing and not encode:
            return None
        if missing and self._built is None:
            # Texts some collection's built matrix already holds (the same text, the same vector).
            self._built = _previous(self.index.collection_id, self.index.fingerprint)
        for key in missing:
            vector = (self._built or {}).get(key.encode())
            if vector is not None:
                self._keep(key, vector)
                found[key] = vector
        missing = [key for key, vector in found.items() if vector is None]
        if missing:
            text_of = {key: self.texts[int(p)] for key, p in zip(keys, positions, strict=True)}
            encoded = _encoder().encode([text_of[key] for key in missing], batch_size=BATCH_SIZE)
            for key, vector in zip(missing, encoded, strict=True):
                _save(_returned_file(key), vector)
                self._keep(key, vector)
                found[key] = vector
        return np.vstack([cast(np.ndarray, found[key]) for key in keys])


def _returned_vectors(hashes: Iterable[bytes]) -> dict[bytes, np.ndarray]:
    """{text hash: vector} of the texts kept one per file under ``returned/`` (a file that cannot be read
    is left out: its text is encoded again)."""
    known: dict[bytes, np.ndarray] = {}
    root = os.path.join(settings.EMBEDDINGS_DIR, "returned")
    if not os.path.isdir(root):
        return known  # no engine reranker kept any: not one stat per answer
    for key in dict.fromkeys(hashes):
        name = key.decode()
        path = os.path.join(root, name[:2], f"{name}.npy")  # _returned_file's, without pathlib's cost
        if not os.path.exists(path):
            continue
        try:
            vector = np.load(path)
        except (OSError, ValueError):
            continue
        if vector.shape == (DIMENSION,):
            known[key] = vector
    return known


def forget_vectors() -> None:
    """Forget what this process holds: the matrices and stores it opened, the vectors it keeps in memory."""
    _vectors.clear()
    _questions.clear()
    _returned.clear()
    _stores.clear()
