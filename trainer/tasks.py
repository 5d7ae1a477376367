"""Celery tasks of the training loop: thin callers of trainer.services."""

from __future__ import annotations

import logging

from celery import shared_task
from celery.signals import worker_ready
from django.db import close_old_connections
from django.utils import timezone

from trainer import services

logger = logging.getLogger(__name__)

# When this worker process started: trainings its node name claimed before this moment lost their worker.
PROCESS_STARTED = timezone.now()


@shared_task(name="trainer.ping")
def ping(*, value: str) -> str:
    """Round-trip check used by the health check and by the test that proves a real worker runs tasks."""
    return value


@shared_task(name="trainer.training_run", bind=True, acks_late=True)
def training_run(self, *, training_id: int) -> str | None:
    """Run one training job (claimed by a conditional UPDATE, so a redelivered message is harmless).

    Not retried: learning is deterministic, so a failure would only repeat; the job records why.
    """
    training = services.training_run(training_id=training_id, worker=self.request.hostname or "unknown")
    return None if training is None else training.status


def _enqueue(training_ids: list[int]) -> None:
    for training_id in training_ids:
        training_run.apply_async(kwargs={"training_id": training_id})


@shared_task(name="trainer.training_sweep", bind=True)
def training_sweep(self) -> int:
    """Beat, every minute: restart trainings whose worker went silent, start due automatic trainings."""
    ids = services.trainings_resume()
    _enqueue(ids)
    services.auto_trainings_start()
    return len(ids)


@worker_ready.connect
def trainings_resume_on_start(sender=None, **kwargs) -> None:
    """A worker starting again restarts the trainings its killed predecessor (same node name) held."""
    hostname = getattr(sender, "hostname", "") or ""
    try:
        close_old_connections()
        ids = services.trainings_resume(worker=hostname, since=PROCESS_STARTED)
        _enqueue(ids)
        if ids:
            logger.info("Restarted %d training(s) left running by a previous %s", len(ids), hostname)
    except Exception:
        # A worker must start even when the database is briefly unreachable; beat's sweep retries.
        logger.exception("could not resume trainings on worker start")
    finally:
        close_old_connections()
