"""A judging run's life: started (its pairs fixed, queued as the Celery task ``judges.run``), cancelled,
resumed, claimed by one worker (QUEUED → RUNNING by a conditional UPDATE), taken over when its worker
went silent.
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from jobs import (
    BrokerUnreachable,
    JobUnavailable,
    broker_require,
    enqueue_after_commit,
    job_claim,
    stale_jobs_take_over,
)
from judges.models import ACTIVE_JUDGING, Judge, Judging, JudgingStatus, Selection
from judges.selectors import select_pairs

JUDGING_MAX_ATTEMPTS = 3
MAX_PAIRS = 5000


class JudgingConflict(Exception):
    def __init__(self, judging: Judging) -> None:
        super().__init__(
            f"Judge {judging.judge.name!r} is already judging (run {judging.pk}, {judging.status})."
        )
        self.judging = judging


class JudgingUnavailable(JobUnavailable):
    """The task queue is unreachable; nothing was stored."""

    @classmethod
    def explain(cls, unreachable: BrokerUnreachable) -> str:
        return f"Judging could not be queued: the task queue is not reachable ({unreachable})."


def _enqueue(judging_id: int) -> None:
    enqueue_after_commit("judges.run", kwargs={"judging_id": judging_id})


def judging_start(
    *,
    judge: Judge,
    selection: str,
    limit: int = 100,
    question_ids: list[str] | None = None,
    budget_tokens: int = 0,
    created_by: User | None = None,
) -> Judging:
    """Fix the pairs to judge and queue the run (Celery task ``judges.run``) after the commit.

    ValidationError naming the field for a bad selection or no pairs; JudgingConflict when the judge is
    already judging; JudgingUnavailable when the broker is unreachable. Nothing is stored then.
    """
    if selection not in Selection.values:
        raise ValidationError({"selection": f"Selection must be one of {', '.join(Selection.values)}."})
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAIRS:
        raise ValidationError({"limit": f"Limit must be a whole number from 1 to {MAX_PAIRS}."})
    if isinstance(budget_tokens, bool) or not isinstance(budget_tokens, int) or budget_tokens < 0:
        raise ValidationError(
            {"budget_tokens": "The budget must be 0 (none) or a positive number of tokens."}
        )
    pairs = select_pairs(judge=judge, selection=selection, limit=limit, question_ids=question_ids or [])
    if not pairs:
        raise ValidationError({"selection": "Nothing to judge: the judge has rated every pair this selects."})
    broker_require(JudgingUnavailable)
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=judge.pk).first()
        active = Judging.objects.filter(judge=judge, status__in=ACTIVE_JUDGING).first()
        if active is not None:
            raise JudgingConflict(active)
        judging = Judging.objects.create(
            judge=judge,
            selection=selection,
            pairs=[list(p) for p in pairs],
            budget_tokens=budget_tokens,
            created_by=created_by,
        )
        _enqueue(judging.pk)
    return judging


@transaction.atomic
def judging_cancel(*, judging: Judging) -> Judging:
    """Stop a run: a queued one at once, a running one at its next judgment (it keeps what it judged)."""
    Judging.objects.filter(pk=judging.pk, status=JudgingStatus.QUEUED).update(
        status=JudgingStatus.CANCELLED, finished_at=timezone.now(), error="Cancelled before it started."
    )
    Judging.objects.filter(pk=judging.pk, status=JudgingStatus.RUNNING).update(cancel_requested=True)
    judging.refresh_from_db()
    return judging


def judging_resume(*, judging: Judging) -> Judging:
    """Queue a failed or cancelled run again: it judges only the pairs the judge has not rated."""
    if not judging.resumable:
        raise ValidationError(
            {"status": f"Only a failed or cancelled run can be resumed; this one is {judging.status}."}
        )
    broker_require(JudgingUnavailable)
    with transaction.atomic():
        Judge.objects.select_for_update().filter(pk=judging.judge_id).first()
        active = Judging.objects.filter(judge_id=judging.judge_id, status__in=ACTIVE_JUDGING).first()
        if active is not None:
            raise JudgingConflict(active)
        Judging.objects.filter(pk=judging.pk).update(
            status=JudgingStatus.QUEUED,
            error="",
            cancel_requested=False,
            finished_at=None,
            attempts=0,
            failed=0,
            claimed_by="",
        )
        _enqueue(judging.pk)
    judging.refresh_from_db()
    return judging


def judging_claim(*, judging_id: int, worker: str) -> bool:
    """QUEUED → RUNNING by one conditional UPDATE: of two workers given the same run, one wins."""
    return job_claim(Judging, pk=judging_id, worker=worker)


def judgings_resume(*, worker: str = "", since: datetime | None = None) -> list[int]:
    """Take over runs whose worker is gone; returns the ids to queue again (as trainings do: back to
    QUEUED, or FAILED with the reason after JUDGING_MAX_ATTEMPTS claims; a lost QUEUED run is queued again)."""
    return stale_jobs_take_over(
        Judging,
        stale_seconds=settings.JUDGING_STALE_SECONDS,
        max_attempts=JUDGING_MAX_ATTEMPTS,
        give_up=f"The worker running this judging stopped {JUDGING_MAX_ATTEMPTS} times; giving up. "
        "What was judged is kept; resume to judge the rest.",
        requeue={},
        worker=worker,
        since=since,
    )
