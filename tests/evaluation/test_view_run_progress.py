"""The progress partial of a run (polled by the dashboard and the run page): what runs, since when, how far."""

import datetime as dt

import pytest
from django.urls import reverse
from django.utils import timezone

from evaluation.models import EvaluationRun, RunStatus
from rankers.models import RankerVersion
from tests.evaluation.test_views import login, text

pytestmark = pytest.mark.django_db


def make_run(ranker, *, status, started_at=None, total=0, done=0, label="v2") -> EvaluationRun:
    version = RankerVersion.objects.create(ranker=ranker, label=label) if label else None
    return EvaluationRun.objects.create(
        ranker=ranker,
        ranker_version=version,
        collection=ranker.collection,
        status=status,
        started_at=started_at,
        questions_total=total,
        questions_done=done,
        ndcg_k=10,
        gain_scheme="linear",
        discount="log2",
        relevance_threshold=1,
        accuracy_k=5,
    )


def today_at(hour: int, minute: int) -> dt.datetime:
    return timezone.make_aware(dt.datetime.combine(timezone.localdate(), dt.time(hour, minute)))


def progress(client, user, run) -> str:
    return text(login(client, user).get(reverse("evaluation:run-progress", args=[run.pk])))


def test_run_progress_running_says_what_since_when_and_how_far(client, rater, builtin_ranker):
    run = make_run(builtin_ranker, status=RunStatus.RUNNING, started_at=today_at(13, 2), total=57, done=20)
    assert (
        "<p>Evaluating <strong>BM25 v2</strong> on 57 test questions since 13:02: "
        '<span data-testid="progress-count">20 of 57</span> (35%).</p>'
    ) in progress(client, rater, run)


def test_run_progress_running_since_another_day_gives_the_date(client, rater, builtin_ranker):
    started = today_at(9, 30) - dt.timedelta(days=1)
    run = make_run(builtin_ranker, status=RunStatus.RUNNING, started_at=started, total=4, done=1)
    body = progress(client, rater, run)
    assert f"on 4 test questions since {started:%Y-%m-%d} 09:30: " in body


def test_run_progress_pending_says_what_is_queued_and_when(client, rater, builtin_ranker):
    run = make_run(builtin_ranker, status=RunStatus.PENDING, label="")
    EvaluationRun.objects.filter(pk=run.pk).update(created_at=today_at(8, 5))
    assert "<p>Evaluation of <strong>BM25</strong> queued at 08:05, waiting for a worker…</p>" in progress(
        client, rater, run
    )
