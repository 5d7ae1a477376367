"""Celery tasks of the rating queue's candidate table: thin callers of raters.next_task.refresh."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.utils import timezone

from jobs import resume_on_start
from raters.next_task import refresh

logger = logging.getLogger(__name__)

# When this worker process started: refreshes its node name claimed before this moment lost their worker.
PROCESS_STARTED = timezone.now()


@shared_task(name="raters.candidates_refresh", bind=True, acks_late=True)
def candidates_refresh(self, *, table_id: int) -> str | None:
    """Refresh one candidate table (claimed by a conditional UPDATE: a redelivered message is harmless)."""
    row = refresh.candidates_refresh(table_id=table_id, worker=self.request.hostname or "unknown")
    return None if row is None else row.status


def _enqueue(table_ids: list[int]) -> None:
    for table_id in table_ids:
        candidates_refresh.apply_async(kwargs={"table_id": table_id})


@shared_task(name="raters.candidates_sweep", bind=True)
def candidates_sweep(self) -> int:
    """Beat, every minute: queue again the refreshes whose worker went silent or whose message was lost, and
    queue those of the tables a change left out of date (an import, a version, embeddings, an evaluation)."""
    ids = refresh.candidate_tables_resume()
    _enqueue(ids)
    return len(ids) + refresh.candidate_tables_stale_queue()


@worker_ready.connect
def candidates_resume_on_start(sender=None, **kwargs) -> None:
    """A worker starting again resumes the refreshes its killed predecessor (same node name) held."""
    resume_on_start(
        sender,
        resume=lambda hostname: refresh.candidate_tables_resume(worker=hostname, since=PROCESS_STARTED),
        enqueue=_enqueue,
        logger=logger,
        resumed="Resumed %d candidate table refresh(es) left running by a previous %s",
        failed="could not resume candidate table refreshes on worker start",
    )
