"""The index-ordered store of an engine's candidates' vectors (rankers.candidate_store, issue 35 §4): a
rerank's 50 vectors in one read, the very vectors the per-text files hold, never another text's."""

from __future__ import annotations

import numpy as np
import pytest

from corpus.formats.records import AnswerRecord
from corpus.services import collection_create
from rankers import semantic
from rankers.candidate_store import open_store, text_key
from rankers.embedding import DIMENSION, text_hash
from rankers.index import load_index
from rankers.semantic import CandidateVectors, answer_texts, forget_vectors, vectors_keep
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures (model_dir)
from trainer.services import collection_import

pytestmark = pytest.mark.django_db

ANSWERS = [AnswerRecord(f"a{i}", f"Title {i}", f"body of answer {i} about wings") for i in range(5)]


def unit_rows(n: int, seed: int = 7) -> np.ndarray:
    rows = np.random.default_rng(seed).normal(size=(n, DIMENSION)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


@pytest.fixture
def index(model_dir, settings, tmp_path):
    settings.EMBEDDINGS_DIR = tmp_path / "embeddings"
    forget_vectors()
    collection = collection_create(name="C", slug="c")
    collection_import(collection=collection, answers=ANSWERS)
    yield load_index(collection=collection)
    forget_vectors()


def test_candidate_store_rows_come_back_only_under_their_text_key(tmp_path):
    store = open_store(tmp_path, "f1", 6)
    assert store is not None
    rows = unit_rows(2)
    keys = np.array([text_key(text_hash("one")), text_key(text_hash("two"))], dtype=np.uint64)
    store.write(np.array([4, 1]), keys, rows)

    # Another opener (as another process would) reads what the first wrote.
    again = open_store(tmp_path, "f1", 6)
    assert again is not None
    read, found = again.read(np.array([1, 4, 2]), np.array([keys[1], keys[0], keys[0]], dtype=np.uint64))
    assert found.tolist() == [True, True, False]
    assert np.array_equal(read[:2], rows[::-1]) and not read[2].any()
    # The row of position 1 is not taken for another text.
    _, found = again.read(np.array([1]), np.array([text_key(text_hash("other"))], dtype=np.uint64))
    assert found.tolist() == [False]
    assert text_key("0" * 64) == 1  # never 0, the key of a row never written


def test_candidate_store_of_a_new_state_removes_the_other_states_stores(tmp_path):
    assert open_store(tmp_path, "aaaa", 3) is not None
    assert open_store(tmp_path, "bbbb", 4) is not None

    assert [p.name for p in tmp_path.iterdir()] == ["candidates-bbbb.npy"]


def test_candidate_store_is_none_where_its_directory_cannot_be_made(tmp_path):
    (tmp_path / "file").write_text("not a directory")
    assert open_store(tmp_path / "file" / "collection-1", "f1", 3) is None


def test_candidate_vectors_read_from_the_store_the_per_text_files_vectors_bit_for_bit(index, settings):
    texts = answer_texts(index=index)
    kept = unit_rows(index.size)
    vectors_keep(keys=[text_hash(t) for t in texts], vectors=kept)
    positions = np.array([3, 0, 4], dtype=np.int64)

    assert np.array_equal(CandidateVectors(index=index, texts=texts).of(positions), kept[positions])

    # A fresh process's state, and the per-text files gone: the three come from the store, the rest nowhere.
    forget_vectors()
    for path in (settings.EMBEDDINGS_DIR / "returned").rglob("*.npy"):
        path.unlink()
    fresh = CandidateVectors(index=index, texts=texts)
    assert np.array_equal(fresh.cached(positions), kept[positions])
    assert fresh.cached(np.array([3, 1], dtype=np.int64)) is None
    # An answer whose text changed at a stored position is not given the old text's vector.
    changed = list(texts)
    changed[3] = "another text"
    assert CandidateVectors(index=index, texts=changed).cached(np.array([3], dtype=np.int64)) is None
    assert semantic._stores  # opened once per process and state


def test_candidate_vectors_without_a_store_read_the_per_text_files(index, settings, monkeypatch):
    texts = answer_texts(index=index)
    kept = unit_rows(index.size, seed=3)
    vectors_keep(keys=[text_hash(t) for t in texts], vectors=kept)
    monkeypatch.setattr(
        semantic.returned, "open_store", lambda *args: None
    )  # a directory that cannot be written

    positions = np.array([2, 1], dtype=np.int64)
    assert np.array_equal(CandidateVectors(index=index, texts=texts).cached(positions), kept[positions])
