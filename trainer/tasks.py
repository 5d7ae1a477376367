"""Celery tasks of the training loop: thin callers of trainer.services."""

from __future__ import annotations

import logging
import threading
import time

from celery import shared_task
from celery.signals import worker_ready
from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from evaluation.tasks import evaluations_take_over
from jobs import resume_on_start
from rankers.models import OnlineTest, OnlineTestState
from rankers.tasks import embeddings_sweep
from trainer import services

logger = logging.getLogger(__name__)

# When this worker process started: trainings its node name claimed before this moment lost their worker.
PROCESS_STARTED = timezone.now()


@shared_task(name="trainer.ping")
def ping(*, value: str) -> str:
    """Round-trip check used by the health check and by the test that proves a real worker runs tasks."""
    return value


@shared_task(name="trainer.online_tests_settle")
def online_tests_settle() -> dict[int, str]:
    """Beat, every minute: each running online test's stop rule, and its promotion by an online policy."""
    return {
        test.pk: services.online_test_settle(test=test)[0]
        for test in OnlineTest.objects.filter(state=OnlineTestState.RUNNING)
    }


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


def trainings_take_over() -> int:
    """Queue again the trainings whose worker is gone (beat's sweep and every worker's watchdog)."""
    ids = services.trainings_resume()
    _enqueue(ids)
    return len(ids)


@shared_task(name="trainer.training_sweep")
def training_sweep() -> int:
    """Beat, every minute: restart trainings whose worker went silent, start due automatic trainings."""
    taken = trainings_take_over()
    services.auto_trainings_start()
    return taken


def watchdog_interval() -> float:
    """Half the shortest stale limit: a job whose worker died is taken over within 1.5 limits."""
    return min(settings.EVALUATION_STALE_SECONDS, settings.TRAINING_STALE_SECONDS) / 2


def jobs_take_over() -> int:
    """One round of the watchdog: evaluation chunks, trainings and embedding parts whose worker is gone
    are queued again. Each kind on its own, so one failing (database briefly down) does not stop the
    others; the next round retries."""
    taken = 0
    for kind, take_over in (
        ("evaluation chunk", evaluations_take_over),
        ("training", trainings_take_over),
        ("embeddings part", embeddings_sweep),
    ):
        try:
            count = take_over()
            taken += count
            if count:
                logger.info("Took over %d %s(s) whose worker is gone", count, kind)
        except Exception:
            logger.exception("could not take over %ss whose worker is gone", kind)
            close_old_connections()  # a broken connection is replaced for the next kind
    return taken


def _watch() -> None:
    while True:
        time.sleep(watchdog_interval())
        try:
            jobs_take_over()
        finally:
            connection.close()  # this thread's own; a fresh one each round survives database restarts


@worker_ready.connect
def watchdog_start(sender=None, **kwargs) -> None:
    """Every worker watches for jobs whose worker is gone, so a SIGKILLed worker's evaluation chunks and
    trainings are taken over by any worker still (or newly) running, beat or not: bounded stalls, not
    "until beat's next sweep", nor "for good" without beat."""
    threading.Thread(target=_watch, name="job-watchdog", daemon=True).start()


@worker_ready.connect
def trainings_resume_on_start(sender=None, **kwargs) -> None:
    """A worker starting again restarts the trainings its killed predecessor (same node name) held."""
    resume_on_start(
        sender,
        resume=lambda hostname: services.trainings_resume(worker=hostname, since=PROCESS_STARTED),
        enqueue=_enqueue,
        logger=logger,
        resumed="Restarted %d training(s) left running by a previous %s",
        failed="could not resume trainings on worker start",
    )
