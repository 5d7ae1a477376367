"""Encoding answers and questions: an answer's text, the collection's answer matrix (read from its built
file), and question vectors with their in-process cache, on the threads ``encode_on_one_thread`` sets."""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict

import numpy as np

from corpus.models import Answer
from rankers.embedding import (
    DIMENSION,
    INTRA_OP_THREADS,
    SINGLE_THREADS,
    Encoder,
    load_encoder,
    text_hash,
)
from rankers.index import CollectionIndex
from rankers.semantic.files import _vectors_file

logger = logging.getLogger(__name__)

BATCH_SIZE = 16
QUESTION_CACHE_SIZE = 4096

_vectors: dict[int, tuple[str, np.ndarray]] = {}
_vectors_lock = threading.Lock()
_questions: OrderedDict[str, np.ndarray] = OrderedDict()
_questions_lock = threading.Lock()


def answer_text(title: str, body: str) -> str:
    return f"{title}. {body}" if title else body


def _texts(index: CollectionIndex) -> list[str]:
    rows = dict(
        (external_id, answer_text(title, body))
        for external_id, title, body in Answer.objects.filter(collection_id=index.collection_id).values_list(
            "external_id", "title", "body"
        )
    )
    return [rows.get(external_id, "") for external_id in index.ids]


def answer_vectors(*, index: CollectionIndex) -> np.ndarray | None:
    """The (answers × 384) unit vectors of the index's answers, or None when they are not built yet."""
    cached = _vectors.get(index.collection_id)
    if cached is not None and cached[0] == index.fingerprint:
        return cached[1]
    path = _vectors_file(index.collection_id, index.fingerprint)
    if not path.exists():
        return None
    matrix = np.load(path, mmap_mode="r")
    if matrix.shape != (index.size, DIMENSION):
        logger.warning(
            "embeddings file %s has shape %s, expected %s", path, matrix.shape, (index.size, DIMENSION)
        )
        return None
    with _vectors_lock:
        _vectors[index.collection_id] = (index.fingerprint, matrix)
    return matrix


# The onnxruntime threads this process encodes questions and an engine's candidates with (the builds'
# parts always use the default two).
_encode_threads = INTRA_OP_THREADS


def encode_on_one_thread() -> None:
    """Make this process encode questions and an engine's candidates on one thread (``ranker_server``, issue
    35 §4): a question's ~25 tokens are ~8 ms of one core either way; on one thread the encoding has no
    hand-offs between threads to wait for, and leaves the other core to the engine and the other requests.
    The vectors are the same bit for bit (tests/rankers/test_embedding.py). The process then loads that
    session alone (each session holds the model's weights, ~110 MB once loaded)."""
    global _encode_threads
    _encode_threads = SINGLE_THREADS


def _encoder() -> Encoder:
    return load_encoder(threads=_encode_threads)


def question_vectors(texts: list[str]) -> np.ndarray:
    """Unit vectors of question texts, from an in-process cache when asked before (~8 ms of a core each
    otherwise; on the threads ``encode_on_one_thread`` may have set).

    Raises EmbeddingUnavailable when the model cannot be loaded.
    """
    keys = [text_hash(text) for text in texts]
    missing = [i for i, key in enumerate(keys) if key not in _questions]
    if missing:
        encoded = _encoder().encode([texts[i] for i in missing], batch_size=BATCH_SIZE)
        with _questions_lock:
            for i, vector in zip(missing, encoded, strict=True):
                _questions[keys[i]] = vector
            while len(_questions) > QUESTION_CACHE_SIZE:
                _questions.popitem(last=False)
    with _questions_lock:
        return np.vstack([_questions[key] for key in keys]) if keys else np.zeros((0, DIMENSION), np.float32)


def answer_texts(*, index: CollectionIndex) -> list[str]:
    """The text each answer's vector is made of, in index order (one query; the caller keeps it)."""
    return _texts(index)
