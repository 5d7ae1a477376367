"""Starting an evaluation run: its metric definition snapshotted onto a PENDING run, queued as the Celery
task ``evaluation.run`` after commit; ``EvaluationUnavailable`` when the broker is unreachable. Also the
scheduled evaluations (Celery beat, ``EVALUATION_SCHEDULE``).
"""

from __future__ import annotations

from functools import partial
from typing import Any, cast

from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.utils import timezone

from corpus.models import Collection
from evaluation.models import EvaluationRun, RunStatus, RunTrigger
from jobs import BrokerUnreachable, JobUnavailable, broker_require, enqueue_after_commit, failure_reason
from rankers.models import Ranker, RankerVersion
from rankers.selectors import default_ranker, ranking_version


class EvaluationUnavailable(JobUnavailable):
    """The evaluation cannot be queued (the Celery broker is unreachable). The API answers 503."""

    @classmethod
    def explain(cls, unreachable: BrokerUnreachable) -> str:
        return _unavailable_message(str(unreachable))


def _unavailable_message(reason: str) -> str:
    return (
        f"The evaluation could not be queued: the task queue (Redis) is not reachable ({reason}). "
        "Ratings still save; start the evaluation again when it is back."
    )


def _publish_failed(run_id: int, exc: Exception) -> None:
    """The run's task could not be published (after commit): mark the run FAILED with the reason, then raise."""
    message = _unavailable_message(failure_reason(exc))
    EvaluationRun.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
        status=RunStatus.FAILED, error=message, finished_at=timezone.now()
    )
    raise EvaluationUnavailable(message) from exc


def evaluation_start(
    *,
    ranker: Ranker,
    ranker_version: RankerVersion | None = None,
    trigger: str,
    created_by: AbstractBaseUser | None = None,
) -> EvaluationRun:
    """Queue an evaluation of the ranker (at the given version, default its latest) on every test question.

    The collection's metric definition is copied onto the run, so later settings changes never rewrite
    history. If a run of the same ranker and version is already pending or running, that run is
    returned instead of starting a second one (a double click, or an API retry).

    Raises EvaluationUnavailable when the broker is unreachable; nothing is stored then.
    """
    if trigger not in RunTrigger.values:
        raise ValueError(f"trigger must be one of {', '.join(RunTrigger.values)}, not {trigger!r}")
    if ranker_version is not None and ranker_version.ranker_id != ranker.pk:
        raise ValueError(f"version {ranker_version.label!r} belongs to another ranker than {ranker.name!r}")
    if ranker_version is None:
        # What the backend would use (its champion, else its latest version), recorded so the history says which one ran.
        ranker_version = ranking_version(ranker=ranker)
    broker_require(EvaluationUnavailable)
    with transaction.atomic():
        # Serialise starts of one ranker so two clicks cannot both create a run.
        Ranker.objects.select_for_update().filter(pk=ranker.pk).first()
        active = (
            EvaluationRun.objects.filter(
                ranker=ranker,
                ranker_version=ranker_version,
                status__in=[RunStatus.PENDING, RunStatus.RUNNING],
            )
            .order_by("-created_at", "-id")
            .first()
        )
        if active is not None:
            return active
        collection: Collection = ranker.collection
        run = EvaluationRun.objects.create(
            ranker=ranker,
            ranker_version=ranker_version,
            collection=collection,
            trigger=trigger,
            created_by=cast(Any, created_by)
            if created_by is not None and created_by.is_authenticated
            else None,
            ndcg_k=collection.ndcg_k,
            gain_scheme=collection.gain_scheme,
            discount=collection.discount,
            relevance_threshold=collection.relevance_threshold,
            accuracy_k=collection.accuracy_k,
        )
        enqueue_after_commit(
            "evaluation.run", kwargs={"run_id": run.pk}, failed=partial(_publish_failed, run.pk)
        )
    return run


def scheduled_evaluations_start() -> list[EvaluationRun]:
    """Start an evaluation of every collection's default ranker (Celery beat, EVALUATION_SCHEDULE)."""
    runs = []
    for collection in Collection.objects.order_by("pk"):
        ranker = default_ranker(collection=collection)
        if ranker is None:
            continue
        version = ranking_version(ranker=ranker)
        runs.append(evaluation_start(ranker=ranker, ranker_version=version, trigger=RunTrigger.SCHEDULE))
    return runs
