"""The Celery task ``raters.candidates_refresh`` in a real worker process: a request finds no table, queues
its refresh, and the worker builds it while the request has answered."""

from __future__ import annotations

import time

import pytest

from corpus.models import Question
from corpus.services import answers_upsert, collection_create, questions_upsert
from raters.models import CandidateTable
from raters.next_task.table import served
from tests.judges.conftest import ANSWERS, QUESTIONS

pytestmark = pytest.mark.django_db(transaction=True)


def test_worker_builds_the_candidate_table_a_request_queued(celery_worker_process, settings):
    settings.QUEUE_INLINE_MAX_ANSWERS = 0  # as a large collection: no table is built by the request
    collection = collection_create(name="Refreshed", slug="refreshed")
    answers_upsert(collection=collection, records=ANSWERS)
    questions_upsert(collection=collection, records=QUESTIONS)

    assert served(collection=collection).freshness == "preparing"

    deadline = time.monotonic() + 60
    while CandidateTable.objects.get(collection=collection).status != "ready" and time.monotonic() < deadline:
        time.sleep(0.05)
    row = CandidateTable.objects.get(collection=collection)
    assert (row.status, row.attempts, row.source) == ("ready", 1, "term overlap"), celery_worker_process.log()
    table = served(collection=collection)
    assert table.freshness == "fresh"
    assert set(table.table) == set(
        Question.objects.filter(collection=collection).values_list("pk", flat=True)
    )
