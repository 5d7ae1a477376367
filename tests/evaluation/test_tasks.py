"""The evaluation tasks in a real Celery worker process, against PostgreSQL and Redis, with faults."""

import time

import pytest

from evaluation import selectors
from evaluation.models import EvaluationRun, QuestionResult, RunStatus, RunTrigger
from evaluation.services import evaluation_start
from tests.conftest import WorkerProcess
from tests.evaluation.conftest import http_ranker
from tests.evaluation.test_services import RANKINGS

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def wait_for(predicate, *, timeout: float = 60, worker=None, what: str = "condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(
        f"timed out waiting for {what}" + (f"\nworker log:\n{worker.log()}" if worker else "")
    )


def wait_finished(run: EvaluationRun, worker, timeout: float = 60) -> EvaluationRun:
    def finished():
        run.refresh_from_db()
        return run.is_finished

    wait_for(finished, timeout=timeout, worker=worker, what=f"run {run.pk} to finish")
    return run


@pytest.fixture
def worker_env(monkeypatch, model_dir, fast_retries):
    """Settings of the worker process (read from the environment when it starts)."""
    monkeypatch.setenv("EVALUATION_CONCURRENCY", "2")
    monkeypatch.setenv("EVALUATION_CHUNK_SIZE", "4")


def test_worker_evaluates_builtin_ranker(worker_env, builtin_ranker, celery_worker_process):
    run = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    wait_finished(run, celery_worker_process)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert (run.questions_total, run.questions_done, run.chunks_total, run.chunks_done) == (6, 6, 2, 2)
    assert run.claimed_by == celery_worker_process.queue + "@localhost"
    assert QuestionResult.objects.filter(run=run).count() == 6
    assert run.no_good_answer_count == 1
    assert "evaluation.chunk" in celery_worker_process.log()


def test_worker_http_ranker_down_fails_run_and_keeps_history(
    worker_env, small, fake_ranker_server, celery_worker_process
):
    server = fake_ranker_server(rankings=RANKINGS)
    ranker = http_ranker(small, server.url)
    good = wait_finished(evaluation_start(ranker=ranker, trigger=RunTrigger.UI), celery_worker_process)
    assert good.status == RunStatus.SUCCEEDED
    ranker.config = {"url": "http://127.0.0.1:1/rank", "retries": 0}
    ranker.save()
    down = wait_finished(evaluation_start(ranker=ranker, trigger=RunTrigger.UI), celery_worker_process)
    assert down.status == RunStatus.FAILED
    assert "could not be ranked" in down.error and "cannot be reached" in down.error
    assert [p.run_id for p in selectors.history(ranker=ranker)] == [good.pk]
    assert selectors.dashboard(collection=small, ranker=ranker).latest == good


def test_worker_slow_ranker_times_out_retries_and_is_correct(
    worker_env, small, fake_ranker_server, celery_worker_process
):
    reference = fake_ranker_server(rankings=RANKINGS)
    clean = wait_finished(
        evaluation_start(ranker=http_ranker(small, reference.url, name="clean"), trigger=RunTrigger.UI),
        celery_worker_process,
    )
    # Every question's first request takes 1 s against a 0.3 s timeout; the retry answers at once.
    slow = fake_ranker_server(rankings=RANKINGS, slow_first=1.0)
    ranker = http_ranker(small, slow.url, name="slow", timeout=0.3, retries=1)
    run = wait_finished(evaluation_start(ranker=ranker, trigger=RunTrigger.UI), celery_worker_process)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert sorted(slow.requests) == sorted([q for q in RANKINGS for _ in range(2)])
    assert (run.ndcg_mean, run.accuracy_mean, run.questions_failed) == (
        clean.ndcg_mean,
        clean.accuracy_mean,
        0,
    )


def test_worker_killed_mid_run_is_resumed_on_restart(
    worker_env, small, fake_ranker_server, celery_worker_process
):
    reference = fake_ranker_server(rankings=RANKINGS)
    clean = wait_finished(
        evaluation_start(ranker=http_ranker(small, reference.url, name="clean"), trigger=RunTrigger.UI),
        celery_worker_process,
    )
    server = fake_ranker_server(rankings=RANKINGS, delay=0.6)
    run = evaluation_start(ranker=http_ranker(small, server.url, name="slow"), trigger=RunTrigger.UI)

    def some_done():
        run.refresh_from_db()
        return 1 <= run.questions_done < 6

    wait_for(some_done, worker=celery_worker_process, what="first results")
    celery_worker_process.kill()
    run.refresh_from_db()
    assert run.status == RunStatus.RUNNING
    stored_before = set(
        QuestionResult.objects.filter(run=run).values_list("question__external_id", flat=True)
    )
    assert 1 <= len(stored_before) < 6

    celery_worker_process.start()  # waits for this start's "ready."
    wait_finished(run, celery_worker_process)
    assert run.status == RunStatus.SUCCEEDED, run.error
    assert "Resumed" in celery_worker_process.log()
    assert QuestionResult.objects.filter(run=run).count() == 6
    # Answers stored before the kill were not asked again.
    assert all(server.requests.count(q) == 1 for q in stored_before)

    def per_question(r):
        return list(
            QuestionResult.objects.filter(run=r)
            .order_by("question_id")
            .values_list("question_id", "ranked_answer_ids", "dcg", "ideal_dcg", "ndcg", "accuracy_hit")
        )

    assert per_question(run) == per_question(clean)
    assert (run.ndcg_mean, run.ndcg_ci_low, run.ndcg_ci_high, run.accuracy_mean, run.judged_mean) == (
        clean.ndcg_mean,
        clean.ndcg_ci_low,
        clean.ndcg_ci_high,
        clean.accuracy_mean,
        clean.judged_mean,
    )


STALE_SECONDS = 20


@pytest.fixture
def short_stale(monkeypatch):
    """The workers' stale limit: they beat every 5 s while holding a chunk and look for silent chunks
    every 10 s. Long enough that a worker starting right after the kill still sees the dead worker's
    heartbeat as fresh (so only the watchdog can take the chunks over), short enough for a test."""
    monkeypatch.setenv("EVALUATION_STALE_SECONDS", str(STALE_SECONDS))
    monkeypatch.setenv("TRAINING_STALE_SECONDS", str(STALE_SECONDS))


def test_worker_killed_and_replaced_under_another_node_name_is_taken_over_without_beat(
    worker_env, short_stale, small, fake_ranker_server, celery_worker_process
):
    # No beat runs here. The killed worker's chunks are RUNNING under its node name; the replacement
    # (a recreated container: same queue, another node name) must take them over by itself.
    server = fake_ranker_server(rankings=RANKINGS, delay=0.6)
    run = evaluation_start(ranker=http_ranker(small, server.url, name="slow"), trigger=RunTrigger.UI)

    def some_done():
        run.refresh_from_db()
        return 1 <= run.questions_done < 6

    wait_for(some_done, worker=celery_worker_process, what="first results")
    celery_worker_process.kill()
    killed_at = time.monotonic()
    stored_before = set(
        QuestionResult.objects.filter(run=run).values_list("question__external_id", flat=True)
    )
    replacement = WorkerProcess(
        queue=celery_worker_process.queue,
        env=celery_worker_process.env,
        log_path=celery_worker_process.log_path.with_name("replacement.log"),
        node=f"replacement-{celery_worker_process.queue}@elsewhere",
    )
    replacement.start()
    try:
        assert time.monotonic() - killed_at < STALE_SECONDS, (
            "the replacement must start while the dead worker still looks alive"
        )
        run.refresh_from_db()
        assert run.status == RunStatus.RUNNING
        wait_finished(run, replacement, timeout=STALE_SECONDS * 3)
        stall = time.monotonic() - killed_at
    finally:
        replacement.stop()
    assert run.status == RunStatus.SUCCEEDED, run.error
    # Bounded: the stale limit, one watchdog interval (half the limit), and the rest of the run.
    assert stall < STALE_SECONDS * 1.5 + 10, stall
    assert "Took over" in replacement.log()
    assert QuestionResult.objects.filter(run=run).count() == 6
    assert all(server.requests.count(q) == 1 for q in stored_before)
    assert set(run.chunks.values_list("status", flat=True)) == {"done"}
    print(f"stall after SIGKILL with stale limit {STALE_SECONDS} s: {stall:.1f} s")
