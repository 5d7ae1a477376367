"""Training jobs: queued (refused, conflicting or unavailable), claimed by one worker, run (learn, decide)
with their progress, taken over when their worker is gone, and started automatically when due."""

from __future__ import annotations

import logging
from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Case, F, Q, Value, When
from django.db.models.functions import Greatest
from django.utils import timezone

from evaluation.models import RunTrigger
from evaluation.services import EvaluationUnavailable, evaluation_start
from jobs import (
    BrokerUnreachable,
    JobUnavailable,
    broker_require,
    enqueue_after_commit,
    failure_reason,
    heartbeat_rows,
    job_claim,
    stale_jobs_take_over,
)
from rankers.models import Ranker, RankerKind
from trainer.models import ACTIVE_TRAINING, Training, TrainingPhase, TrainingStatus
from trainer.selectors import Readiness, auto_training_due, training_readiness

from .learning import ranker_train
from .promotion import version_decide

logger = logging.getLogger(__name__)

TRAINING_MAX_ATTEMPTS = 3


class TrainingUnavailable(JobUnavailable):
    """Training cannot be queued: the Celery broker is unreachable."""

    @classmethod
    def explain(cls, unreachable: BrokerUnreachable) -> str:
        return f"Training could not be queued: the task queue is not reachable ({unreachable})."


class TrainingConflict(Exception):
    """The ranker is already training; ``training`` is that job."""

    def __init__(self, training: Training) -> None:
        self.training = training
        super().__init__(
            f"{training.ranker.name} is already training (training {training.pk}, {training.status} since "
            f"{timezone.localtime(training.started_at or training.created_at):%Y-%m-%d %H:%M})."
        )


class TrainingRefused(Exception):
    """Too few labelled training questions to learn from; the message says how many more are needed."""

    def __init__(self, readiness: Readiness) -> None:
        self.readiness = readiness
        super().__init__(readiness.message)


def training_start(*, ranker: Ranker, created_by: User | None = None, trigger: str = "ui") -> Training:
    """Queue a training of a ranker of any kind (Celery task ``trainer.training_run``) after the commit.

    Refuses with TrainingRefused when there are too few labelled training questions, TrainingConflict
    (naming the running job) when the ranker already trains, TrainingUnavailable when the broker is
    unreachable; nothing is stored in any of these cases.
    """
    readiness = training_readiness(ranker=ranker)
    if not readiness.ready:
        raise TrainingRefused(readiness)
    broker_require(TrainingUnavailable)
    with transaction.atomic():
        Ranker.objects.select_for_update().filter(pk=ranker.pk).first()
        active = Training.objects.filter(ranker=ranker, status__in=ACTIVE_TRAINING).first()
        if active is not None:
            raise TrainingConflict(active)
        training = Training.objects.create(ranker=ranker, created_by=created_by, trigger=trigger)
        enqueue_after_commit("trainer.training_run", kwargs={"training_id": training.pk})
    return training


# Where each phase starts on the 0–1 progress bar; a phase reports its own fraction within its span.
PHASE_START = {
    TrainingPhase.COLLECT_LABELS: 0.0,
    TrainingPhase.COMPUTE_FEATURES: 0.05,
    TrainingPhase.CROSS_VALIDATE: 0.30,
    TrainingPhase.FIT: 0.75,
    TrainingPhase.EVALUATE: 0.80,
    TrainingPhase.DECIDE: 0.97,
    TrainingPhase.DONE: 1.0,
}
_PHASES = list(PHASE_START)


def training_progress_write(*, training_id: int, phase: str, fraction: float) -> None:
    """Store a running training's phase and progress (``fraction`` of ``phase``'s span on the bar) and
    beat its heartbeat. The bar never goes back: a value below the stored one (a step that restarts its
    own count, a late report) leaves progress and phase as they are."""
    start = PHASE_START[TrainingPhase(phase)]
    following = _PHASES[_PHASES.index(TrainingPhase(phase)) + 1] if phase != TrainingPhase.DONE else phase
    end = PHASE_START[TrainingPhase(following)]
    value = round(min(1.0, start + (end - start) * min(max(fraction, 0.0), 1.0)), 4)
    # One UPDATE: PostgreSQL reads the stored progress in both expressions, so no other write interleaves.
    Training.objects.filter(pk=training_id, status=TrainingStatus.RUNNING).update(
        phase=Case(When(progress__gt=value, then=F("phase")), default=Value(phase)),
        progress=Greatest(F("progress"), Value(value)),
        heartbeat_at=timezone.now(),
    )


def training_claim(*, training_id: int, worker: str) -> bool:
    """QUEUED → RUNNING by one conditional UPDATE: of two workers given the same job, one wins."""
    return job_claim(
        Training, pk=training_id, worker=worker, phase=TrainingPhase.COLLECT_LABELS, progress=0.0
    )


def training_run(*, training_id: int, worker: str) -> Training | None:
    """Claim the job and run it: learn a version, evaluate it against the champion, apply the policy.

    Any error fails the job with the reason (a version already made is kept and can be promoted by
    hand). Returns the finished job, or None when another worker had claimed it.
    """
    if not training_claim(training_id=training_id, worker=worker):
        return None
    training = Training.objects.select_related("ranker__collection", "ranker__champion").get(pk=training_id)
    ranker = training.ranker
    mine = Training.objects.filter(pk=training_id, status=TrainingStatus.RUNNING, claimed_by=worker)
    try:
        # Beats on a timer: cross-validation can report no progress for minutes on a big collection.
        with heartbeat_rows(mine, stale_seconds=settings.TRAINING_STALE_SECONDS):
            version = ranker_train(
                ranker=ranker,
                created_by=training.created_by,
                progress=lambda phase, fraction: training_progress_write(
                    training_id=training_id, phase=phase, fraction=fraction
                ),
            )
            Training.objects.filter(pk=training_id).update(version=version)
            training_progress_write(training_id=training_id, phase=TrainingPhase.EVALUATE, fraction=0.0)
            decision, reason = version_decide(version=version)
            training_progress_write(training_id=training_id, phase=TrainingPhase.DECIDE, fraction=1.0)
    except Exception as exc:
        logger.exception("training %s of ranker %s failed", training_id, ranker.pk)
        Training.objects.filter(pk=training_id).update(
            status=TrainingStatus.FAILED,
            finished_at=timezone.now(),
            error=failure_reason(exc)[:2000],  # shown on the Rankers page: words, no class name
        )
        return Training.objects.get(pk=training_id)
    Training.objects.filter(pk=training_id).update(
        status=TrainingStatus.SUCCEEDED,
        phase=TrainingPhase.DONE,
        progress=1.0,
        finished_at=timezone.now(),
        decision=decision,
        decision_reason=reason,
    )
    if decision == "promoted":
        try:  # the new champion's first point on the history chart
            evaluation_start(ranker=ranker, ranker_version=version, trigger=RunTrigger.TRAINING)
        except EvaluationUnavailable as exc:
            logger.warning(
                "promoted %s %s but could not queue its evaluation: %s", ranker, version.label, exc
            )
    return Training.objects.get(pk=training_id)


def trainings_resume(*, worker: str = "", since: datetime | None = None) -> list[int]:
    """Take over trainings whose worker is gone; returns the ids to queue again.

    Gone means: its heartbeat is older than TRAINING_STALE_SECONDS, or (on a worker's start) it was
    claimed by this worker's node name before this process started. Such a job goes back to QUEUED,
    or FAILED with the reason after TRAINING_MAX_ATTEMPTS claims, so none stays running forever.
    A QUEUED job nobody claimed for that long (its message lost) is queued again.
    """
    return stale_jobs_take_over(
        Training,
        stale_seconds=settings.TRAINING_STALE_SECONDS,
        max_attempts=TRAINING_MAX_ATTEMPTS,
        give_up=f"The worker running this training stopped {TRAINING_MAX_ATTEMPTS} times; giving up. "
        "Check the worker's log, then train again.",
        requeue={"phase": TrainingPhase.QUEUED, "progress": 0.0},
        worker=worker,
        since=since,
    )


def auto_trainings_start() -> list[Training]:
    """Start trainings that rankers asked for: after N new training labels, or every so many hours."""
    started = []
    for ranker in Ranker.objects.filter(kind=RankerKind.BUILTIN).filter(
        Q(auto_train_labels__isnull=False) | Q(auto_train_hours__isnull=False)
    ):
        if auto_training_due(ranker=ranker):
            try:
                started.append(training_start(ranker=ranker, trigger="auto"))
            except (TrainingRefused, TrainingConflict, TrainingUnavailable) as exc:
                logger.info("automatic training of ranker %s not started: %s", ranker.pk, exc)
    return started
