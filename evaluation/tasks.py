"""Celery tasks of evaluation runs: thin callers of evaluation.services (see its docstring for the flow)."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.db import OperationalError
from django.utils import timezone

from evaluation import services
from jobs import resume_on_start

logger = logging.getLogger(__name__)

# When this worker process started: chunks its node name held before this moment belong to a dead process.
PROCESS_STARTED = timezone.now()


def _chunks_enqueue(chunk_ids: list[int]) -> None:
    for chunk_id in chunk_ids:
        evaluation_chunk.apply_async(kwargs={"chunk_id": chunk_id})


# A lost database connection is the one transient error these tasks retry (with backoff); a ranker's
# transient errors are retried per question inside the chunk.
RETRY_ON_DATABASE_ERRORS = {
    "bind": True,
    "autoretry_for": (OperationalError,),
    "retry_backoff": True,
    "retry_backoff_max": 60,
    "max_retries": 5,
}


@shared_task(name="evaluation.run", **RETRY_ON_DATABASE_ERRORS)
def evaluation_run(self, *, run_id: int) -> None:
    """Claim the run (PENDING→RUNNING) and fan its test questions out in chunk tasks."""
    _chunks_enqueue(services.run_plan(run_id=run_id, worker=self.request.hostname or "unknown"))


@shared_task(name="evaluation.chunk", **RETRY_ON_DATABASE_ERRORS)
def evaluation_chunk(self, *, chunk_id: int) -> None:
    """Evaluate one chunk of questions; the task that completes the last chunk finalises the run."""
    services.chunk_evaluate(
        chunk_id=chunk_id, worker=self.request.hostname or "unknown", token=self.request.id or ""
    )


def evaluations_take_over() -> int:
    """Queue again the chunks whose worker is gone and the PENDING runs whose message was lost.

    Called by beat's sweep and by every worker's watchdog (``trainer.tasks``), so a killed worker's
    chunks are taken over by whichever worker is running, with or without beat. No node name: the
    rules for a node's own predecessor apply once, when it starts (``evaluations_resume_on_start``).
    """
    chunk_ids = services.evaluations_resume(worker="", since=PROCESS_STARTED)
    _chunks_enqueue(chunk_ids)
    for run_id in services.stale_pending_runs():
        evaluation_run.apply_async(kwargs={"run_id": run_id})
    return len(chunk_ids)


@shared_task(name="evaluation.sweep")
def evaluation_sweep() -> int:
    """Beat, every minute: take over chunks whose worker went silent, re-queue lost PENDING runs."""
    return evaluations_take_over()


@shared_task(name="evaluation.scheduled")
def evaluation_scheduled() -> int:
    """Beat, on EVALUATION_SCHEDULE: evaluate every collection's default ranker."""
    return len(services.scheduled_evaluations_start())


@worker_ready.connect
def evaluations_resume_on_start(sender=None, **kwargs) -> None:
    """A worker starting finishes the chunks its killed predecessor (same node name) left RUNNING, and
    any worker's chunks that went silent for the stale limit (a predecessor with another node name).

    The broker would redeliver those unacknowledged messages only after its visibility timeout (an hour
    on Redis), so resuming here is what makes a restart finish the run promptly. A predecessor killed
    less than the stale limit ago still looks alive; the new worker's watchdog takes its chunks over
    once its heartbeat is that old.
    """
    resume_on_start(
        sender,
        resume=lambda hostname: services.evaluations_resume(worker=hostname, since=PROCESS_STARTED),
        enqueue=_chunks_enqueue,
        logger=logger,
        resumed="Resumed %d evaluation chunk(s) left running by a previous %s",
        failed="could not resume evaluations on worker start",
    )
