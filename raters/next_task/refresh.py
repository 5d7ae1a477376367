"""The job that refreshes a collection's candidate table (:mod:`.table`) in the background, on
``jobs/``'s lifecycle: claimed QUEUED → RUNNING by one conditional UPDATE (``job_claim``), a heartbeat on
a timer while it builds, taken over when its worker is gone (``candidate_tables_resume``: beat's sweep
every minute, and a worker's start).

A build is for the collection's state when it starts; if a request saw a newer state meanwhile
(``wanted``), the job builds again before it lets go, so the last change is never left unbuilt.

A change queues the refresh without waiting for a rater: at once after its commit
(``candidate_table_changed``, through ``raters.signals``; a new collection's import queues its first
build, so its first rater normally finds the ranker's candidates), and beat's sweep (``candidate_tables_stale_queue``,
every minute) queues the refresh of every table that still no longer matches its collection (an import, a
new version or champion, an embeddings build, an evaluation), two queries a collection.
"""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.utils import timezone

from corpus.models import Collection
from jobs import failure_reason, heartbeat_rows, job_claim, stale_jobs_take_over
from raters.models import CandidateTable, TableStatus
from raters.next_task.table import is_fresh, refresh_request, table_build, table_row, table_state

logger = logging.getLogger(__name__)

REFRESH_MAX_ATTEMPTS = 3
# A collection changing faster than it can be ranked is built at most this many times in one job run;
# the requests that see the newer state queue the next one.
BUILDS_PER_RUN = 5


def candidates_refresh(*, table_id: int, worker: str) -> CandidateTable | None:
    """Claim the table's job and build it (incrementally, ``table.table_build``) until it matches the
    collection's state. Returns the row, or None when another worker had claimed it."""
    if not job_claim(CandidateTable, pk=table_id, worker=worker):
        return None
    row = CandidateTable.objects.select_related("collection").get(pk=table_id)
    held = CandidateTable.objects.filter(pk=table_id, status=TableStatus.RUNNING, claimed_by=worker)
    try:
        with heartbeat_rows(held, stale_seconds=settings.CANDIDATES_STALE_SECONDS):
            for _ in range(BUILDS_PER_RUN):
                asked = held.values_list("asked", flat=True).get()
                table_build(
                    collection=row.collection, state=table_state(collection=row.collection), previous=row
                )
                # Done unless a request asked for a newer state while this one was built.
                if held.filter(asked=asked).update(status=TableStatus.READY, finished_at=timezone.now()):
                    break
            else:
                held.update(status=TableStatus.READY, finished_at=timezone.now())
    except Exception as exc:
        logger.exception("candidate table %s: refresh failed", table_id)
        held.update(status=TableStatus.FAILED, finished_at=timezone.now(), error=failure_reason(exc))
    row.refresh_from_db()
    return row


def candidate_tables_resume(*, worker: str = "", since: datetime | None = None) -> list[int]:
    """Take over refreshes whose worker is gone; the ids to queue again (back to QUEUED, or FAILED after
    REFRESH_MAX_ATTEMPTS claims, when a request's next change queues it again; a lost QUEUED one is
    queued again)."""
    return stale_jobs_take_over(
        CandidateTable,
        stale_seconds=settings.CANDIDATES_STALE_SECONDS,
        max_attempts=REFRESH_MAX_ATTEMPTS,
        give_up=f"The worker refreshing the candidate table stopped {REFRESH_MAX_ATTEMPTS} times; giving up.",
        requeue={},
        worker=worker,
        since=since,
    )


def candidate_tables_stale_queue() -> int:
    """Queue the refresh of every idle table built for an older state of its collection (``refresh_request``:
    one conditional UPDATE, so a request queueing it at the same moment does not queue it twice), and of
    one never built (its first build lost or failed for an older state). Returns how many were queued."""
    queued = 0
    idle = CandidateTable.objects.filter(status__in=[TableStatus.READY, TableStatus.FAILED])
    for row in idle.select_related("collection").defer("table", "run_top"):
        state = table_state(collection=row.collection)
        if is_fresh(row, state):
            continue
        queued += refresh_request(row=row, state=state)
    return queued


def candidate_table_changed(*, collection_id: int) -> bool:
    """Queue the refresh of the collection's table when a change left it out of date: the sweep's work
    (``candidate_tables_stale_queue``) for one collection, right after the change. A collection with no
    table yet (a new one, its first import) gets its row and its first build queued here, so its first
    rater finds the table built (or the term-overlap fallback while it is not). True when this call
    queued the job."""
    collection = Collection.objects.filter(pk=collection_id).first()
    if collection is None:  # deleted since
        return False
    row = CandidateTable.objects.filter(collection=collection).defer("table", "run_top").first()
    if row is None:
        row = table_row(collection=collection)
    state = table_state(collection=collection)
    if is_fresh(row, state):
        return False
    return refresh_request(row=row, state=state)
