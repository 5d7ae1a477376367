"""The builtin ranker's BM25 retrieval and its index: build, persistence, rebuild on change."""

from __future__ import annotations

import pytest

from corpus.formats.records import AnswerRecord
from corpus.services import answers_upsert
from rankers.backends import RankQuery, get_backend
from rankers.builtin import BuiltinBackend, clear_ranker_caches
from rankers.index import index_root, load_index
from rankers.models import Ranker, RankerKind
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import tiny_answers

pytestmark = pytest.mark.django_db


@pytest.fixture
def ranker(collection, model_dir):
    tiny_answers(collection)
    return Ranker.objects.create(collection=collection, name="Built-in", kind=RankerKind.BUILTIN)


def test_builtin_rank_returns_matching_answers_best_first(ranker):
    ranking = get_backend(ranker).rank(RankQuery("q1", "boundary layer flows"), 10)

    # a1 has boundary, layer and flow (twice); a4 boundary and layer (stemmed from "boundaries",
    # "layered"); a2 flow once; a3 shares no term, so it is not returned at all.
    assert ranking.ids == ["a1", "a4", "a2"]
    assert ranking.unknown_ids == []
    scores = [score for _, score in ranking.answers]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)


def test_builtin_rank_cuts_at_k(ranker):
    assert get_backend(ranker).rank(RankQuery("q1", "boundary layer flows"), 2).ids == ["a1", "a4"]


def test_builtin_rank_question_without_known_terms_returns_nothing(ranker):
    backend = get_backend(ranker)

    assert backend.rank(RankQuery("q1", "the of and"), 10).ids == []
    assert backend.rank(RankQuery("q2", "xylophone"), 10).ids == []
    assert backend.rank(RankQuery("q3", ""), 10).ids == []


def test_builtin_rank_empty_collection_returns_nothing(collection, model_dir):
    ranker = Ranker.objects.create(collection=collection, name="Empty", kind=RankerKind.BUILTIN)

    assert get_backend(ranker).rank(RankQuery("q1", "boundary layer"), 10).ids == []


def test_builtin_index_is_persisted_and_read_back_after_restart(ranker, model_dir):
    built = load_index(collection=ranker.collection)
    directory = index_root(collection_id=ranker.collection.pk) / built.fingerprint
    assert (directory / "meta.json").exists()
    assert built.build_seconds > 0

    clear_ranker_caches()  # a new process
    read = load_index(collection=ranker.collection)

    assert read is not built
    assert read.build_seconds == 0.0  # read from disk, not rebuilt
    assert read.fingerprint == built.fingerprint
    assert read.ids == ["a1", "a2", "a3", "a4"]
    query = RankQuery("q1", "boundary layer flows")
    assert BuiltinBackend(collection=ranker.collection, index=read).rank(query, 10).answers == (
        BuiltinBackend(collection=ranker.collection, index=built).rank(query, 10).answers
    )


def test_builtin_index_is_cached_in_memory(ranker):
    assert load_index(collection=ranker.collection) is load_index(collection=ranker.collection)


def test_builtin_index_is_rebuilt_when_an_answer_changes(ranker):
    before = load_index(collection=ranker.collection)
    answers_upsert(
        collection=ranker.collection,
        records=[AnswerRecord("a3", "Heat transfer", "Heat transfer through the boundary layer of a cone.")],
    )

    after = load_index(collection=ranker.collection)

    assert after.fingerprint != before.fingerprint
    # a4 has "boundary" as often as a1 in fewer words, so BM25 puts it above a1.
    assert get_backend(ranker).rank(RankQuery("q1", "heat boundary"), 10).ids == ["a3", "a4", "a1"]
    # The stale index is gone from disk; only the current one remains (beside the build lock).
    names = sorted(p.name for p in index_root(collection_id=ranker.collection.pk).iterdir())
    assert names == [".lock", after.fingerprint]


def test_builtin_index_is_rebuilt_when_an_answer_is_added_or_deleted(ranker):
    first = load_index(collection=ranker.collection).fingerprint
    answers_upsert(
        collection=ranker.collection, records=[AnswerRecord("a5", "Boundary layer", "Boundary layer.")]
    )
    added = load_index(collection=ranker.collection).fingerprint
    ranker.collection.answers.filter(external_id="a5").delete()
    deleted = load_index(collection=ranker.collection).fingerprint

    assert added != first
    # Deleting a5 leaves exactly the answers of the first index, so that index is valid again.
    assert deleted == first
    assert "a5" not in get_backend(ranker).rank(RankQuery("q1", "boundary layer"), 10).ids


def test_builtin_indexes_of_two_collections_are_separate(ranker, other_collection):
    answers_upsert(collection=other_collection, records=[AnswerRecord("o1", "Boundary", "Boundary layer.")])
    other = Ranker.objects.create(collection=other_collection, name="Other", kind=RankerKind.BUILTIN)

    assert get_backend(other).rank(RankQuery("q1", "boundary layer"), 10).ids == ["o1"]
    assert get_backend(ranker).rank(RankQuery("q1", "boundary layer"), 10).ids == ["a4", "a1"]


def test_builtin_rank_with_the_shared_first_stage_ranks_the_same(ranker, other_collection):
    """ranker_server's interleaving computes BM25 once for both versions of a collection."""
    from rankers.builtin import bm25_scores, shares_first_stage
    from rankers.models import RankerVersion

    fusion = RankerVersion.objects.create(
        ranker=ranker,
        label="v2",
        method="fusion",
        details={"params": {"signals": ["bm25", "rm3"], "weights": [-1.0, 0.5]}},
    )
    bm25, reranking = get_backend(ranker), get_backend(ranker, fusion)
    query = RankQuery("q1", "boundary layer flows")
    first_stage = bm25_scores(bm25, query)
    other = get_backend(Ranker.objects.create(collection=other_collection, name="O", kind=RankerKind.BUILTIN))

    assert shares_first_stage(bm25, reranking) and not shares_first_stage(bm25, other)
    assert reranking.reranks and reranking.rank(query, 3).ids == ["a2", "a4", "a1"]
    for backend in (bm25, reranking):
        assert backend.rank(query, 3, first_stage=first_stage).answers == backend.rank(query, 3).answers
