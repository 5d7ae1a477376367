"""The candidate table's refresh (issue 37): the change markers, the job (claim, take-over), the previous
table serving while it runs, the term-overlap fallback before the first table, and what the rating page
says of them. No request builds a table: here the job runs in this process, as a worker runs it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from corpus.formats.records import AnswerRecord
from corpus.models import Answer, Collection, Question
from corpus.services import answers_upsert
from raters.models import CandidateTable
from raters.next_task.picking import next_task
from raters.next_task.refresh import candidate_tables_resume, candidate_tables_stale_queue, candidates_refresh
from raters.next_task.table import served, table_row
from tests.raters.conftest import table_refreshed

pytestmark = pytest.mark.django_db


def _markers(collection) -> tuple[int, int]:
    return (
        Collection.objects.filter(pk=collection.pk).values_list("answers_version", "questions_version").get()
    )


def test_collection_changed_markers_move_on_an_import_and_a_single_save(corpus):
    before = _markers(corpus.collection)

    answers_upsert(
        collection=corpus.collection,
        records=[AnswerRecord("new-1", "t", "b"), AnswerRecord("new-2", "t", "b")],
    )
    assert _markers(corpus.collection) == (before[0] + 1, before[1])

    answers_upsert(collection=corpus.collection, records=[AnswerRecord("new-1", "t", "b")])  # unchanged
    assert _markers(corpus.collection) == (before[0] + 1, before[1])

    Question.objects.create(collection=corpus.collection, external_id="q-new", text="lift", split="train")
    assert _markers(corpus.collection) == (before[0] + 1, before[1] + 1)


def test_candidate_table_first_built_by_the_job_not_the_request(corpus, builtin_ranker):
    first = served(collection=corpus.collection)

    a, q = corpus.a, corpus.q
    assert (first.freshness, first.source) == ("preparing", "term overlap")
    assert first.table == {  # the fallback: term overlap, made in the request
        q["q1"].pk: [a["d1"].pk, a["d2"].pk],
        q["q2"].pk: [a["d3"].pk, a["d4"].pk],
        q["q3"].pk: [a["d5"].pk, a["d2"].pk],
    }
    assert first.note == (
        "The queue is being prepared: while the ranker finds each question's candidate answers in the "
        "background, a few questions are offered with the answers sharing the most words with them "
        "(term overlap)."
    )
    row = CandidateTable.objects.get(collection=corpus.collection)
    assert (row.status, row.version, row.built_at, row.table) == ("queued", 0, None, {})
    assert candidates_refresh(table_id=row.pk, worker="w1").status == "ready"
    fresh = served(collection=corpus.collection)
    assert (fresh.freshness, fresh.source, fresh.note) == ("fresh", "ranker", "")
    assert set(fresh.table) == {q.pk for q in corpus.q.values()}


def test_candidate_table_change_serves_the_previous_table_until_refreshed(corpus, builtin_ranker):
    served(collection=corpus.collection)
    row = CandidateTable.objects.get(collection=corpus.collection)
    candidates_refresh(table_id=row.pk, worker="w1")
    before = served(collection=corpus.collection).table
    extra = Answer.objects.create(
        collection=corpus.collection, external_id="extra", title="Wing lift", body="wing lift wing lift drag"
    )

    stale = served(collection=corpus.collection)

    assert stale.freshness == "stale"
    assert stale.table == before
    assert stale.note.startswith("The collection changed")
    assert CandidateTable.objects.get(pk=row.pk).status == "queued"
    assert candidates_refresh(table_id=row.pk, worker="w1").status == "ready"
    after = served(collection=corpus.collection)
    assert after.freshness == "fresh"
    assert any(extra.pk in pool for pool in after.table.values())


def test_candidate_tables_stale_queue_queues_a_changed_collection_before_any_rater_asks(
    corpus, builtin_ranker
):
    served(collection=corpus.collection)
    row = CandidateTable.objects.get(collection=corpus.collection)
    candidates_refresh(table_id=row.pk, worker="w1")
    assert candidate_tables_stale_queue() == 0  # built for the collection as it is

    answers_upsert(collection=corpus.collection, records=[AnswerRecord("swept", "Wing", "wing lift")])

    assert candidate_tables_stale_queue() == 1
    assert CandidateTable.objects.get(pk=row.pk).status == "queued"
    assert candidate_tables_stale_queue() == 0  # queued once
    assert candidates_refresh(table_id=row.pk, worker="w1").status == "ready"
    assert served(collection=corpus.collection).freshness == "fresh"


def test_candidate_tables_stale_queue_queues_a_first_build_that_was_lost(corpus, builtin_ranker):
    row = table_row(collection=corpus.collection)  # its first build's message never reached a worker

    assert candidate_tables_stale_queue() == 1
    assert CandidateTable.objects.get(pk=row.pk).status == "queued"


def test_next_task_with_no_table_offers_the_fallback_and_builds_none(corpus, builtin_ranker, rater):
    task = next_task(collection=corpus.collection, rater=rater)

    a, q = corpus.a, corpus.q
    # No rating yet: a training question first (the queue's tie-break), with its term-overlap candidates.
    overlap = {q["q1"].pk: [a["d1"].pk, a["d2"].pk], q["q3"].pk: [a["d5"].pk, a["d2"].pk]}
    assert task.question_id in overlap
    assert sorted(task.answer_ids) == sorted(overlap[task.question_id])
    row = CandidateTable.objects.get(collection=corpus.collection)
    assert (row.status, row.version, row.built_at, row.table) == ("queued", 0, None, {})  # none built


def test_candidate_table_new_question_only_ranks_it(corpus, builtin_ranker):
    served(collection=corpus.collection)
    row = CandidateTable.objects.get(collection=corpus.collection)
    candidates_refresh(table_id=row.pk, worker="w1")
    before = served(collection=corpus.collection).table
    question = Question.objects.create(
        collection=corpus.collection, external_id="q-new", text="wing lift", split="train"
    )

    assert served(collection=corpus.collection).freshness == "stale"
    candidates_refresh(table_id=row.pk, worker="w1")

    after = served(collection=corpus.collection).table
    assert {q: after[q] for q in before} == before
    assert after[question.pk]


def test_candidates_refresh_claimed_once(corpus, builtin_ranker):
    served(collection=corpus.collection)
    row = CandidateTable.objects.get(collection=corpus.collection)

    assert candidates_refresh(table_id=row.pk, worker="w1") is not None
    assert candidates_refresh(table_id=row.pk, worker="w2") is None  # a redelivered message


def test_candidate_tables_resume_takes_over_a_silent_refresh(corpus, builtin_ranker, settings):
    served(collection=corpus.collection)
    row = CandidateTable.objects.get(collection=corpus.collection)
    silent = timezone.now() - timedelta(seconds=settings.CANDIDATES_STALE_SECONDS + 5)
    CandidateTable.objects.filter(pk=row.pk).update(
        status="running", claimed_by="gone", heartbeat_at=silent, attempts=1
    )

    assert candidate_tables_resume() == [row.pk]
    assert CandidateTable.objects.get(pk=row.pk).status == "queued"
    assert candidates_refresh(table_id=row.pk, worker="w2").status == "ready"


def test_candidate_table_without_ranker_says_term_overlap(corpus):
    table = table_refreshed(corpus.collection)

    assert (table.freshness, table.source) == ("fresh", "term overlap")
    assert "term overlap" in table.note


def test_collection_save_read_before_an_import_leaves_the_markers_alone(corpus):
    stale = Collection.objects.get(pk=corpus.collection.pk)
    answers_upsert(collection=corpus.collection, records=[AnswerRecord("new-1", "t", "b")])
    moved = _markers(corpus.collection)

    stale.name = "Renamed"
    stale.save()

    assert _markers(corpus.collection) == moved
    assert Collection.objects.get(pk=corpus.collection.pk).name == "Renamed"
