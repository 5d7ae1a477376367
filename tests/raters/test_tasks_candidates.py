"""The Celery task ``raters.candidates_refresh`` in a real worker process: a new collection's import queues
its first build, and the worker builds it with no rater asking (no request builds a table)."""

from __future__ import annotations

import time

import pytest

from corpus.models import Question
from corpus.services import answers_upsert, collection_create, questions_upsert
from raters.models import CandidateTable
from raters.next_task.table import served
from tests.judges.conftest import ANSWERS, QUESTIONS

pytestmark = pytest.mark.django_db(transaction=True)


def test_worker_builds_the_candidate_table_an_import_queued(celery_worker_process):
    collection = collection_create(name="Refreshed", slug="refreshed")
    answers_upsert(collection=collection, records=ANSWERS)
    questions_upsert(collection=collection, records=QUESTIONS)

    # Awaits the worker's build of the state after both imports (the row's version moves when it saves).
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        row = CandidateTable.objects.get(collection=collection)
        if row.status == "ready" and len(row.table) == len(QUESTIONS):
            break
        time.sleep(0.05)
    assert (row.status, row.source, row.claimed_by) == (
        "ready",
        "term overlap",
        celery_worker_process.name,
    ), celery_worker_process.log()
    table = served(collection=collection)
    assert table.freshness == "fresh"
    assert set(table.table) == set(
        Question.objects.filter(collection=collection).values_list("pk", flat=True)
    )
