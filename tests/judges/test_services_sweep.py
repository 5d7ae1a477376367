"""A judging whose worker went silent is queued again, or failed after three attempts."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from judges.models import Judging, JudgingStatus
from judges.services import JUDGING_MAX_ATTEMPTS, judge_create, judgings_resume


def _running(judge, *, attempts: int, silent_for: int) -> Judging:
    then = timezone.now() - timedelta(seconds=silent_for)
    return Judging.objects.create(
        judge=judge, selection="queue", pairs=[], status=JudgingStatus.RUNNING, attempts=attempts,
        started_at=then, heartbeat_at=then, claimed_by="w1@host",
    )  # fmt: skip


def test_silent_run_is_queued_again(judged, settings):
    settings.JUDGING_STALE_SECONDS = 60
    judging = _running(
        judge_create(collection=judged.collection, name="A", kind="builtin"), attempts=1, silent_for=120
    )

    assert judgings_resume() == [judging.pk]
    judging.refresh_from_db()
    assert (judging.status, judging.claimed_by) == (JudgingStatus.QUEUED, "")


def test_run_that_lost_its_worker_three_times_fails_with_the_reason(judged, settings):
    settings.JUDGING_STALE_SECONDS = 60
    judge = judge_create(collection=judged.collection, name="A", kind="builtin")
    judging = _running(judge, attempts=JUDGING_MAX_ATTEMPTS, silent_for=120)

    assert judgings_resume() == []
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.FAILED
    assert "stopped 3 times" in judging.error and "What was judged is kept" in judging.error


def test_live_run_is_left_alone(judged, settings):
    settings.JUDGING_STALE_SECONDS = 60
    judging = _running(
        judge_create(collection=judged.collection, name="A", kind="builtin"), attempts=1, silent_for=5
    )

    assert judgings_resume() == []
    judging.refresh_from_db()
    assert judging.status == JudgingStatus.RUNNING


def test_worker_restart_takes_back_its_own_runs(judged, settings):
    settings.JUDGING_STALE_SECONDS = 600
    judging = _running(
        judge_create(collection=judged.collection, name="A", kind="builtin"), attempts=1, silent_for=5
    )

    assert judgings_resume(worker="w1@host", since=timezone.now()) == [judging.pk]
