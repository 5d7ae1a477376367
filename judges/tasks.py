"""Celery tasks of judging runs: thin callers of judges.services."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.utils import timezone

from jobs import resume_on_start
from judges import services

logger = logging.getLogger(__name__)

# When this worker process started: runs its node name claimed before this moment lost their worker.
PROCESS_STARTED = timezone.now()


@shared_task(name="judges.run", bind=True, acks_late=True)
def judging_run(self, *, judging_id: int) -> str | None:
    """Run one judging (claimed by a conditional UPDATE, so a redelivered message is harmless).

    Not retried as a whole: the client retries each call's transient errors, and a resumed run skips
    what was judged."""
    judging = services.judging_run(judging_id=judging_id, worker=self.request.hostname or "unknown")
    return None if judging is None else judging.status


def _enqueue(judging_ids: list[int]) -> None:
    for judging_id in judging_ids:
        judging_run.apply_async(kwargs={"judging_id": judging_id})


@shared_task(name="judges.sweep", bind=True)
def judging_sweep(self) -> int:
    """Beat, every minute: queue again the runs whose worker went silent."""
    ids = services.judgings_resume()
    _enqueue(ids)
    return len(ids)


@worker_ready.connect
def judgings_resume_on_start(sender=None, **kwargs) -> None:
    """A worker starting again resumes the runs its killed predecessor (same node name) held."""
    resume_on_start(
        sender,
        resume=lambda hostname: services.judgings_resume(worker=hostname, since=PROCESS_STARTED),
        enqueue=_enqueue,
        logger=logger,
        resumed="Resumed %d judging run(s) left running by a previous %s",
        failed="could not resume judging runs on worker start",
    )
