"""The queue's pool: two rankings taken in turns, a rating budget per question, a page of k answers."""

from __future__ import annotations

import pytest

from rankers.backends import RankQuery, get_backend
from rankers.models import RankerVersion
from rankers.services import ranker_create, version_promote
from raters.next_task.budget import budgeted
from raters.next_task.picking import next_task, task_for_question
from raters.next_task.pool import interleaved, pooled_versions
from raters.next_task.table import candidate_table
from ratings.services import rating_record
from tests.raters.conftest import table_refreshed

pytestmark = pytest.mark.django_db


def test_interleaved_takes_turns_and_keeps_each_answer_once():
    assert interleaved([[1, 2, 3], [4, 1, 5]], 3) == [1, 4, 2, 3, 5]
    assert interleaved([[1, 2, 3], [4, 1, 5]], 1) == [1, 4]
    assert interleaved([[7]], 10) == [7]


def test_budgeted_new_pairs_stop_at_the_budget():
    # One pair rated once (1 rating spent): a budget of 3 pays for 2 new pairs of 1 rating each.
    assert budgeted([1, 2, 3, 4, 5], {1: (1, 0)}, budget=3, target=1) == [1, 2, 3]
    # Needing 3 raters per pair, the started pair still owes 2 ratings: (7 - 1 - 2) // 3 = 1 new pair.
    assert budgeted([1, 2, 3, 4, 5], {1: (1, 0)}, budget=7, target=3) == [1, 2]
    # Spent: nothing new, but the labelled pair stays (its raters are still counted and shown).
    assert budgeted([1, 2, 3], {1: (1, 0), 9: (5, 0)}, budget=4, target=1) == [1]


@pytest.fixture
def reversed_champion(corpus, builtin_ranker):
    """The builtin ranker's champion ranks BM25's candidates in reverse; ``bm25`` is the other version."""
    corpus.collection.ndcg_k = 1  # top 1 of each ranking: the pool is exactly the two first answers
    corpus.collection.save(update_fields=["ndcg_k"])
    RankerVersion.objects.create(ranker=builtin_ranker, label="bm25", method="bm25")
    champion = RankerVersion.objects.create(
        ranker=builtin_ranker,
        label="v2",
        method="learned-fusion",
        uses_model=True,
        details={"params": {"signals": ["bm25", "rm3"], "weights": [-1.0, 0.0]}},
    )
    version_promote(version=champion, changed_by=None, reason="test")
    builtin_ranker.refresh_from_db()
    return builtin_ranker


def test_pooled_versions_are_the_champion_and_the_latest_other(reversed_champion):
    assert [v.label for v in pooled_versions(ranker=reversed_champion)] == ["v2", "bm25"]


def test_pooled_versions_skip_a_version_that_ranks_as_the_champion(reversed_champion):
    params = reversed_champion.champion.details
    RankerVersion.objects.create(
        ranker=reversed_champion, label="v3", method="learned-fusion", details=params
    )
    RankerVersion.objects.create(
        ranker=reversed_champion,
        label="v4",
        method="learned-fusion",
        details={"params": {"signals": ["bm25", "rm3"], "weights": [0.0, 1.0]}},
    )
    RankerVersion.objects.create(
        ranker=reversed_champion, label="v5", method="learned-fusion", details=params
    )

    # v5 and v3 rank as the champion v2 does; v4 is the latest that ranks differently; then the baseline.
    assert [v.label for v in pooled_versions(ranker=reversed_champion)] == ["v2", "v4", "bm25"]


def test_pooled_versions_of_an_engine_ranker_are_its_reranker_and_the_engine_as_it_is(corpus):
    ranker = ranker_create(
        collection=corpus.collection,
        name="Engine",
        kind="engine",
        config={"preset": "solr", "url": "http://s.test/solr/a/select"},
    )
    v1 = RankerVersion.objects.create(ranker=ranker, label="v1", method="")  # the engine as it is
    announced = RankerVersion.objects.create(ranker=ranker, label="build-7")  # ranks as the engine too
    fusion = {"params": {"signals": ["engine", "cosine"], "weights": [0.5, 0.5]}}
    v2 = RankerVersion.objects.create(ranker=ranker, label="v2", method="fusion", details=fusion)
    version_promote(version=v1, changed_by=None, reason="first")
    ranker.refresh_from_db()

    # The engine's champion and its latest reranker in turns: the challenger's top 10 gets rated.
    assert [v.label for v in pooled_versions(ranker=ranker)] == ["v1", "v2"]

    version_promote(version=v2, changed_by=None, reason="better")
    ranker.refresh_from_db()
    # The reranker champion and the engine as it is (the latest version that does not rerank), once.
    assert [v.label for v in pooled_versions(ranker=ranker)] == ["v2", announced.label]


def test_candidate_table_pools_the_champion_and_a_second_ranking(corpus, reversed_champion):
    table_refreshed(corpus.collection)
    table = candidate_table(collection=corpus.collection)

    a, q = corpus.a, corpus.q
    # BM25 puts d1 first for q1 and d5 for q3; the reversed champion puts d2 first for both.
    assert table[q["q1"].pk] == [a["d2"].pk, a["d1"].pk]
    assert table[q["q3"].pk] == [a["d2"].pk, a["d5"].pk]
    champion = get_backend(reversed_champion).rank(RankQuery("q1", q["q1"].text), 1)
    assert champion.ids == ["d2"]  # the champion alone would never show d1


def test_next_task_shows_a_page_of_k_then_the_second_ranking(corpus, reversed_champion, rater):
    q1 = corpus.q["q1"]
    table_refreshed(corpus.collection)

    first = task_for_question(collection=corpus.collection, rater=rater, question=q1)
    assert first.answer_ids == [corpus.a["d2"].pk]  # k = 1 per page: the champion's first
    rating_record(rater=rater, question=q1, answer=corpus.a["d2"], stars=3)
    second = task_for_question(collection=corpus.collection, rater=rater, question=q1)

    assert second.answer_ids == [corpus.a["d1"].pk]


def test_next_task_keeps_to_the_rating_budget(corpus, reversed_champion, rater, make_user):
    corpus.collection.rating_budget = 1
    corpus.collection.save(update_fields=["rating_budget"])
    q1 = corpus.q["q1"]
    table_refreshed(corpus.collection)

    task = task_for_question(collection=corpus.collection, rater=rater, question=q1)
    assert task.answer_ids == [corpus.a["d2"].pk]
    rating_record(rater=rater, question=q1, answer=corpus.a["d2"], stars=3)

    # q1's one rating is spent: another rater is not asked for a new pair there.
    other = make_user("other-rater")
    task = next_task(collection=corpus.collection, rater=other, split="train")
    assert task.question_id == corpus.q["q3"].pk
