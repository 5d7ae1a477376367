"""Celery tasks of the training loop: thin callers of trainer.services."""

from __future__ import annotations

import logging

from celery import shared_task

from evaluation.models import RunTrigger
from evaluation.services import EvaluationUnavailable, evaluation_start
from rankers.models import Ranker
from trainer.services import ranker_train as train_service

logger = logging.getLogger(__name__)


@shared_task(name="trainer.ping")
def ping(*, value: str) -> str:
    """Round-trip check used by the health check and by the test that proves a real worker runs tasks."""
    return value


@shared_task(name="trainer.ranker_train", acks_late=True)
def ranker_train(*, ranker_id: int) -> int | None:
    """Train a new version of a builtin ranker, then start its evaluation. Returns the version id.

    Not retried: training is deterministic, so a failure would only repeat. If the evaluation cannot be
    queued (broker gone) the version is kept; it is evaluated by the next run a trainer starts.
    """
    ranker = Ranker.objects.select_related("collection").filter(pk=ranker_id).first()
    if ranker is None:
        logger.warning("ranker %s no longer exists; nothing to train", ranker_id)
        return None
    version = train_service(ranker=ranker)
    try:
        evaluation_start(ranker=ranker, ranker_version=version, trigger=RunTrigger.TRAINING)
    except EvaluationUnavailable as exc:
        logger.warning("trained %s %s but could not queue its evaluation: %s", ranker, version.label, exc)
    return version.pk
