"""The rater pages share the rating fixtures (a small corpus, rankers, evaluation runs), and
``table_refreshed``: the candidate table brought up to date by its job, as a worker does it."""

from __future__ import annotations

from raters.models import CandidateTable
from raters.next_task.refresh import candidates_refresh
from raters.next_task.table import Served, served
from tests.ratings.conftest import *  # noqa: F403


def table_refreshed(collection) -> Served:
    """The collection's candidate table as the refresh job leaves it: a read finds it out of date and
    queues the job (no request builds it), and the job runs here, in this process, as a worker runs it
    (a test without a committed transaction has no worker to hand it to)."""
    if served(collection=collection).freshness != "fresh":
        row = CandidateTable.objects.get(collection=collection)
        assert candidates_refresh(table_id=row.pk, worker="test").status == "ready"
    table = served(collection=collection)
    assert table.freshness == "fresh"
    return table
