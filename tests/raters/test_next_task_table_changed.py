"""A change queues the candidate table's refresh right after its commit (``raters.signals`` and
``refresh.candidate_table_changed``), without a rater's request or beat's sweep: an import of answers
(``jobs.collection_state_changed`` from ``corpus``), a new version, an evaluation that succeeded, and a
new collection's first import its first build."""

from __future__ import annotations

import pytest

from corpus.formats.records import AnswerRecord
from corpus.services import answers_upsert, collection_create
from rankers.models import RankerVersion
from raters.models import CandidateTable
from raters.next_task.refresh import candidate_table_changed, candidates_refresh
from raters.next_task.table import served, table_state
from tests.ratings.conftest import make_run

# Committed changes: the refresh is queued after the commit.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def built(corpus, builtin_ranker) -> CandidateTable:
    """The collection's table, built by the job and fresh."""
    served(collection=corpus.collection)
    row = CandidateTable.objects.get(collection=corpus.collection)
    assert candidates_refresh(table_id=row.pk, worker="w1").status == "ready"
    assert served(collection=corpus.collection).freshness == "fresh"
    return row


def _status_and_wanted(row: CandidateTable) -> tuple[str, bool, int]:
    row.refresh_from_db()
    return row.status, row.wanted == table_state(collection=row.collection), row.asked


def test_table_changed_queued_by_an_import_of_answers(corpus, built):
    asked = _status_and_wanted(built)[2]
    answers_upsert(collection=corpus.collection, records=[AnswerRecord("new-1", "Wing", "wing lift")])
    assert _status_and_wanted(built) == ("queued", True, asked + 1)


def test_table_changed_queued_by_a_new_version_and_an_evaluation(corpus, builtin_ranker, built):
    asked = _status_and_wanted(built)[2]
    RankerVersion.objects.create(ranker=builtin_ranker, label="v9")
    assert _status_and_wanted(built) == ("queued", True, asked + 1)
    assert candidates_refresh(table_id=built.pk, worker="w1").status == "ready"

    make_run(builtin_ranker, {corpus.q["q2"]: (["d3", "d4"], 0.5)})
    assert _status_and_wanted(built) == ("queued", True, asked + 2)


def test_table_changed_leaves_a_fresh_table(corpus, built):
    assert candidate_table_changed(collection_id=corpus.collection.pk) is False  # fresh: nothing to do
    assert _status_and_wanted(built)[0] == "ready"


def test_table_changed_queues_a_new_collections_first_build(db):
    collection = collection_create(name="New", slug="new")
    assert not CandidateTable.objects.filter(collection=collection).exists()

    answers_upsert(collection=collection, records=[AnswerRecord("new-1", "Wing", "wing lift")])

    row = CandidateTable.objects.get(collection=collection)
    assert (row.status, row.built_at, row.wanted == table_state(collection=collection)) == (
        "queued",
        None,
        True,
    )
