"""Beat's tasks: the sweep that takes over silent chunks and lost runs, and the scheduled evaluations."""

import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from evaluation import services
from evaluation.models import EvaluationChunk, EvaluationRun, RunStatus, RunTrigger
from evaluation.services import chunk as chunks
from evaluation.tasks import evaluation_scheduled, evaluation_sweep
from tests.conftest import ROOT

pytestmark = pytest.mark.django_db


def test_sweep_requeues_silent_chunks_and_lost_pending_runs(builtin_ranker, broker_queue):
    with transaction.atomic():
        running = services.evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    (chunk_id,) = services.run_plan(run_id=running.pk, worker="gone@host")
    assert chunks._chunk_claim(chunk_id=chunk_id, worker="gone@host", token="t1")
    ago = timezone.now() - timedelta(minutes=10)
    EvaluationChunk.objects.filter(pk=chunk_id).update(heartbeat_at=ago)
    lost = EvaluationRun.objects.create(
        ranker=builtin_ranker,
        collection=builtin_ranker.collection,
        ndcg_k=10,
        gain_scheme="linear",
        discount="log2",
        relevance_threshold=1,
        accuracy_k=5,
    )
    EvaluationRun.objects.filter(pk=lost.pk).update(created_at=ago)
    assert evaluation_sweep.apply().get() == 1
    assert broker_queue.messages() == [
        {"task": "evaluation.chunk", "kwargs": {"chunk_id": chunk_id}},
        {"task": "evaluation.run", "kwargs": {"run_id": lost.pk}},
    ]


def test_sweep_finalises_run_whose_chunks_are_all_done(builtin_ranker, broker_queue):
    with transaction.atomic():
        run = services.evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    (chunk_id,) = services.run_plan(run_id=run.pk, worker="w@host")
    services.chunk_evaluate(chunk_id=chunk_id, worker="w@host", token="t")
    # As if the worker died between counting the last chunk and finalising.
    EvaluationRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING, ndcg_mean=None)
    evaluation_sweep.apply()
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED and run.ndcg_mean is not None


def test_scheduled_task_starts_default_rankers(builtin_ranker, broker_queue):
    assert evaluation_scheduled.apply().get() == 1
    assert EvaluationRun.objects.get().trigger == RunTrigger.SCHEDULE


@pytest.mark.parametrize(("schedule", "expected"), [("", "False"), ("0 3 * * 1", "True")])
def test_evaluation_schedule_setting_adds_beat_entry(schedule, expected):
    env = {**os.environ, "EVALUATION_SCHEDULE": schedule, "DJANGO_SETTINGS_MODULE": "config.settings"}
    code = (
        "from django.conf import settings; s = settings.CELERY_BEAT_SCHEDULE; "
        "print('evaluation-sweep' in s, 'evaluation-scheduled' in s)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", expected]


def test_sweep_requeues_a_pending_chunk_nobody_claimed_once_per_stale_limit(
    builtin_ranker, broker_queue, settings
):
    # A killed worker's prefetched chunk message is gone with it: the chunk stays PENDING, unclaimed.
    with transaction.atomic():
        run = services.evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    (chunk_id,) = services.run_plan(run_id=run.pk, worker="gone@host")
    assert services.evaluations_resume(worker="", since=timezone.now()) == []  # just queued
    EvaluationChunk.objects.filter(pk=chunk_id).update(
        heartbeat_at=timezone.now() - timedelta(seconds=settings.EVALUATION_STALE_SECONDS + 1)
    )
    assert evaluation_sweep.apply().get() == 1
    assert evaluation_sweep.apply().get() == 0  # queued again once, not on every sweep
    assert broker_queue.messages() == [{"task": "evaluation.chunk", "kwargs": {"chunk_id": chunk_id}}]


def test_watchdog_round_takes_over_chunks_and_trainings_whose_worker_is_gone(
    builtin_ranker, broker_queue, settings
):
    from trainer.models import Training, TrainingStatus
    from trainer.tasks import jobs_take_over

    gone = timezone.now() - timedelta(seconds=settings.EVALUATION_STALE_SECONDS + 1)
    with transaction.atomic():
        run = services.evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    (chunk_id,) = services.run_plan(run_id=run.pk, worker="gone@host")
    assert chunks._chunk_claim(chunk_id=chunk_id, worker="gone@host", token="t1")
    EvaluationChunk.objects.filter(pk=chunk_id).update(heartbeat_at=gone)
    training = Training.objects.create(
        ranker=builtin_ranker,
        status=TrainingStatus.RUNNING,
        heartbeat_at=gone,
        attempts=1,
        claimed_by="gone@host",
    )

    assert jobs_take_over() == 2

    assert broker_queue.messages() == [
        {"task": "evaluation.chunk", "kwargs": {"chunk_id": chunk_id}},
        {"task": "trainer.training_run", "kwargs": {"training_id": training.pk}},
    ]
    assert EvaluationChunk.objects.get(pk=chunk_id).status == "pending"
    training.refresh_from_db()
    assert (training.status, training.claimed_by) == (TrainingStatus.QUEUED, "")


@pytest.mark.django_db(transaction=True)
def test_slow_ranker_chunk_is_not_taken_over_while_its_worker_beats(small, fake_ranker_server, settings):
    # One request takes 2.5 s, longer than the 1 s stale limit: only the timer's heartbeat (every
    # 0.25 s) shows the worker is alive, as no result is written in between.
    import threading

    from tests.evaluation.conftest import http_ranker

    settings.EVALUATION_STALE_SECONDS = 1
    settings.EVALUATION_CONCURRENCY = 6
    server = fake_ranker_server(rankings={}, delay=2.5)
    run = services.evaluation_start(ranker=http_ranker(small, server.url, timeout=10), trigger=RunTrigger.UI)
    (chunk_id,) = services.run_plan(run_id=run.pk, worker="alive@host")
    worker = threading.Thread(
        target=services.chunk_evaluate, kwargs={"chunk_id": chunk_id, "worker": "alive@host", "token": "t1"}
    )
    worker.start()
    taken = []
    while worker.is_alive():
        taken += services.evaluations_resume(worker="other@host", since=timezone.now())
        time.sleep(0.1)
    worker.join()
    assert taken == []
    run.refresh_from_db()
    assert (run.status, run.questions_done) == (RunStatus.SUCCEEDED, 6)
