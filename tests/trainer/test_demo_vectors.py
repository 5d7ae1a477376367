"""The demo's shipped answer vectors: every demo answer's, the model's own, and found by the first build."""

from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from corpus.models import Collection
from rankers import semantic
from rankers.embedding import DIMENSION, load_encoder, text_hash
from rankers.index import load_index
from rankers.models import BuildStatus
from trainer import demo_vectors
from trainer.demo_vectors import DEMO_VECTORS_FILE, demo_answer_texts, demo_vectors_encode, demo_vectors_seed


@pytest.fixture(scope="module")
def shipped() -> tuple[list[str], np.ndarray]:
    with np.load(DEMO_VECTORS_FILE) as data:
        return [str(key) for key in data["keys"]], data["vectors"]


def test_demo_vectors_file_has_a_unit_vector_for_every_demo_answer_in_order(shipped):
    keys, vectors = shipped
    assert keys == [text_hash(text) for text in demo_answer_texts()]
    assert (vectors.shape, vectors.dtype) == ((1400, DIMENSION), np.float32)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


def test_demo_vectors_are_the_models_vectors_of_the_first_batches(shipped):
    # The first two batches of the first part are the batches a build encodes (the int8 model's
    # activations are quantised per batch): the same vectors, up to the CPU's rounding.
    texts = demo_answer_texts()[: 2 * semantic.encoding.BATCH_SIZE]
    encoded = demo_vectors_encode(texts, load_encoder())
    np.testing.assert_allclose(encoded, shipped[1][: len(texts)], atol=1e-5)


def test_demo_vectors_of_another_model_are_not_used(tmp_path, monkeypatch):
    monkeypatch.setattr(demo_vectors, "MODEL_SHA256", "0" * 64)
    assert demo_vectors_seed(root=tmp_path) == 0
    assert not (tmp_path / "returned").exists()


def test_bootstrap_demo_seeds_the_vectors_so_the_first_build_encodes_none(db, settings, tmp_path):
    settings.VAR_DIR = tmp_path
    settings.EMBEDDINGS_DIR = tmp_path / "embeddings"
    call_command("bootstrap_demo", stdout=StringIO())
    assert demo_vectors_seed() == 0  # kept once: the second start adds nothing
    index = load_index(collection=Collection.objects.get(slug="cranfield"))
    build, _ = semantic.embeddings_build_for(index=index)

    parts = semantic.embeddings_plan(build_id=build.pk, index=index)

    build.refresh_from_db()
    assert (parts, build.status, build.answers_total, build.answers_reused) == (
        [],
        BuildStatus.SUCCEEDED,
        1400,
        1400,
    )
    assert semantic.answer_vectors(index=index).shape == (1400, DIMENSION)
