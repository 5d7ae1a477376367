import math

import numpy as np
import pytest
from django.db import transaction

from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Answer, Question, Split
from corpus.services import answers_upsert, collection_create, questions_upsert
from evaluation import selectors, services
from evaluation.metrics.ranking import evaluate_rankings
from evaluation.metrics.stats import bootstrap_ci, compare_runs
from evaluation.models import (
    ChunkStatus,
    EvaluationChunk,
    EvaluationRun,
    QuestionResult,
    RunStatus,
    RunTrigger,
)
from evaluation.services import EvaluationUnavailable, evaluation_start
from evaluation.services import chunk as chunks
from rankers.backends import get_backend
from rankers.models import Ranker, RankerKind, RankerVersion
from ratings.selectors import labels_by_question
from ratings.services import rating_record
from tests.evaluation.conftest import broker_url_set, http_ranker
from tests.evaluation.helpers import evaluate_inline
from trainer.services import import_rater

pytestmark = pytest.mark.django_db

LOG2_3 = math.log2(3)


def log2(rank: int) -> float:
    return math.log2(rank + 1)


# ----------------------------------------------------------------------------------------- start


def test_evaluation_start_snapshots_metric_definition(builtin_ranker, small):
    small.ndcg_k, small.gain_scheme, small.discount = 7, "exponential", "jarvelin_kekalainen"
    small.relevance_threshold, small.accuracy_k = 2, 3
    small.save()
    version = RankerVersion.objects.create(ranker=builtin_ranker, label="v1")
    run = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    small.ndcg_k = 10
    small.save()
    run.refresh_from_db()
    assert (run.ndcg_k, run.gain_scheme, run.discount, run.relevance_threshold, run.accuracy_k) == (
        7,
        "exponential",
        "jarvelin_kekalainen",
        2,
        3,
    )
    assert run.status == RunStatus.PENDING
    assert run.ranker_version == version  # the latest version, recorded
    assert run.collection == small


def test_evaluation_start_publishes_run_task_after_commit(
    builtin_ranker, broker_queue, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.API)
        assert broker_queue.messages() == []
    for callback in callbacks:
        callback()
    assert broker_queue.messages() == [{"task": "evaluation.run", "kwargs": {"run_id": run.pk}}]


def test_evaluation_start_returns_active_run_of_same_version(builtin_ranker, broker_queue):
    first = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    second = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.API)
    assert second.pk == first.pk
    assert EvaluationRun.objects.count() == 1
    RankerVersion.objects.create(ranker=builtin_ranker, label="v2")
    third = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.TRAINING)
    assert third.pk != first.pk
    assert third.ranker_version.label == "v2"


def test_evaluation_start_broker_down_raises_clear_error_and_stores_nothing(builtin_ranker, dead_broker):
    with pytest.raises(EvaluationUnavailable, match="task queue \\(Redis\\) is not reachable"):
        evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    assert EvaluationRun.objects.count() == 0


def test_evaluation_start_broker_lost_before_publish_marks_run_failed(
    builtin_ranker, django_capture_on_commit_callbacks
):
    from config.celery import app

    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        run = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    previous = app.conf.broker_url
    broker_url_set("redis://127.0.0.1:1/0")
    try:
        with pytest.raises(EvaluationUnavailable):
            callbacks[0]()
    finally:
        broker_url_set(previous)
    run.refresh_from_db()
    assert run.status == RunStatus.FAILED
    assert "not reachable" in run.error


def test_evaluation_start_rejects_version_of_another_ranker(builtin_ranker, small):
    other = Ranker.objects.create(collection=small, name="Other", kind=RankerKind.BUILTIN)
    version = RankerVersion.objects.create(ranker=other, label="v1")
    with pytest.raises(ValueError, match="belongs to another ranker"):
        evaluation_start(ranker=builtin_ranker, ranker_version=version, trigger=RunTrigger.UI)


# ----------------------------------------------------------------------------------------- per question


RANKINGS = {
    "q1": ["a3", "a1", "a2"],  # labels 1, 3, unlabelled
    "q2": ["a2", "a7"],  # the ideal order
    "q3": [
        "a1",
        "a6",
        "a4",
        "a2",
        "a5",
        "a3",
    ],  # the relevant answer at rank 6: NDCG counts it, accuracy@5 not
    "q4": ["a8", "zz"],  # label 2 at rank 1; "zz" is not an answer of the collection
    "q5": [],
    "q6": ["a4"],  # only a 0 label known: no known good answer
}


def test_run_stores_per_question_values(small, fake_ranker_server):
    server = fake_ranker_server(rankings=RANKINGS)
    run = evaluate_inline(http_ranker(small, server.url))
    assert run.status == RunStatus.SUCCEEDED, run.error
    results = {
        r.question.external_id: r for r in QuestionResult.objects.filter(run=run).select_related("question")
    }
    assert sorted(results) == ["q1", "q2", "q3", "q4", "q5", "q6"]

    q1 = results["q1"]
    assert q1.ranked_answer_ids == ["a3", "a1", "a2"]
    assert q1.labels == [1, 3, None]
    assert q1.dcg == pytest.approx(1 + 3 / LOG2_3)
    assert q1.ideal_dcg == pytest.approx(3 + 2 / LOG2_3 + 1 / 2)
    assert q1.ndcg == pytest.approx((1 + 3 / LOG2_3) / (3 + 2 / LOG2_3 + 1 / 2))
    assert q1.accuracy_hit is True
    assert q1.unlabelled_in_top_k == 1
    assert q1.judged == pytest.approx(0.2)
    assert q1.ideal == [["a1", 3], ["a5", 2], ["a3", 1]]

    assert results["q2"].ndcg == pytest.approx(1.0)
    assert results["q3"].ndcg == pytest.approx((3 / log2(6)) / 3)
    assert results["q3"].accuracy_hit is False
    assert results["q3"].labels == [0, None, None, None, None, 3]
    assert results["q4"].unknown_answer_ids == ["zz"]
    assert results["q4"].ndcg == pytest.approx(2 / (3 + 2 / LOG2_3))
    assert results["q4"].unlabelled_in_top_k == 1
    assert results["q5"].ndcg == 0.0
    assert results["q5"].accuracy_hit is False
    assert results["q6"].ndcg is None
    assert results["q6"].ideal_dcg == 0.0

    ndcgs = [results[q].ndcg for q in ["q1", "q2", "q3", "q4", "q5"]]
    assert run.ndcg_mean == pytest.approx(sum(ndcgs) / 5)
    assert run.scored_count == 5
    assert run.no_good_answer_count == 1
    assert run.accuracy_mean == pytest.approx(3 / 5)  # q1, q2, q4 hit; over questions with a good answer
    assert run.judged_mean == pytest.approx((0.2 + 0.2 + 0.2 + 0.1 + 0 + 0.1) / 6)
    assert run.unlabelled_in_top_k == 1 + 0 + 4 + 1 + 0 + 0
    assert run.label_count == 14
    ci = bootstrap_ci(np.array(ndcgs), seed=0)
    assert (run.ndcg_ci_low, run.ndcg_ci_high) == (pytest.approx(ci.low), pytest.approx(ci.high))
    assert (run.questions_total, run.questions_done, run.questions_failed) == (6, 6, 0)
    assert run.previous_run is None and run.verdict == ""


def test_run_per_question_values_equal_metrics_engine(builtin_ranker, small):
    run = evaluate_inline(builtin_ranker)
    assert run.status == RunStatus.SUCCEEDED, run.error
    results = list(QuestionResult.objects.filter(run=run).order_by("question_id"))
    labels = labels_by_question(question_ids=[r.question_id for r in results])
    expected = evaluate_rankings(
        [r.ranked_answer_ids for r in results], [labels[r.question_id] for r in results], k=10, accuracy_k=5
    )
    for i, result in enumerate(results):
        assert result.dcg == expected.dcg[i]
        assert result.ideal_dcg == expected.ideal_dcg[i]
        assert result.ndcg == (None if math.isnan(expected.ndcg[i]) else expected.ndcg[i])
        assert result.accuracy_hit == bool(expected.success[i])
        assert result.unlabelled_in_top_k == expected.unlabelled_in_top_k[i]
    assert results[0].ranked_answer_ids[0] == "a1"  # BM25 finds the boundary layer answer for q1


# ----------------------------------------------------------------------------------------- failures


def test_run_fails_when_more_than_5_percent_of_questions_fail(small, fake_ranker_server, fast_retries):
    server = fake_ranker_server(rankings=RANKINGS, fail={"q1"})
    ranker = http_ranker(small, server.url, retries=2)
    run = evaluate_inline(ranker)
    error = f"Ranker unavailable: ranker at {server.url} answered 500 Internal Server Error (3 attempts)"
    assert run.status == RunStatus.FAILED
    assert run.error == (
        "1 of 6 test questions (17%) could not be ranked; a run fails when more than 5% of its test "
        "questions (here 0) cannot be ranked, so its score would not be comparable. First error: " + error
    )
    assert (run.questions_done, run.questions_failed, run.questions_not_attempted) == (6, 1, 0)
    assert run.first_error == error
    assert run.ndcg_mean is None
    assert selectors.history(ranker=ranker) == []
    assert QuestionResult.objects.get(run=run, question__external_id="q1").error == error


def test_run_retries_only_in_the_ranker_and_says_the_attempts_made(small, fake_ranker_server, fast_retries):
    # The ranker's retries (2) are the one retry layer: 3 requests per failing question, and the
    # message says 3 (an evaluation-level retry on top made it 3 x 3 = 9 while saying 3).
    server = fake_ranker_server(rankings=RANKINGS, fail={"q1", "q2"})
    run = evaluate_inline(http_ranker(small, server.url, retries=2))
    assert (server.requests.count("q1"), server.requests.count("q2"), server.requests.count("q3")) == (
        3,
        3,
        1,
    )
    errors = QuestionResult.objects.filter(run=run).exclude(error="").values_list("error", flat=True)
    assert (
        list(errors)
        == [f"Ranker unavailable: ranker at {server.url} answered 500 Internal Server Error (3 attempts)"] * 2
    )


def test_run_without_ranker_retries_asks_each_question_once(small, fake_ranker_server, fast_retries):
    server = fake_ranker_server(rankings=RANKINGS, fail={"q1"})
    run = evaluate_inline(http_ranker(small, server.url, retries=0))
    assert server.requests.count("q1") == 1
    assert run.first_error == (
        f"Ranker unavailable: ranker at {server.url} answered 500 Internal Server Error (1 attempt)"
    )


def test_run_stopped_early_says_attempted_failed_and_not_attempted(
    fake_ranker_server, fast_retries, settings
):
    # 40 test questions in chunks of 3; the ranker fails every question. The first chunk's 3 failures
    # exceed the 2 (5%) a run may lose, so the other 37 questions are never asked.
    settings.EVALUATION_CHUNK_SIZE = 3
    collection = many_questions(40)
    server = fake_ranker_server(rankings=good(40), fail={f"t{i}" for i in range(1, 41)})
    run = evaluate_inline(http_ranker(collection, server.url))
    error = f"Ranker unavailable: ranker at {server.url} answered 500 Internal Server Error (1 attempt)"
    assert run.status == RunStatus.FAILED
    assert len(server.requests) == 3
    assert (run.questions_total, run.questions_done, run.questions_failed, run.questions_not_attempted) == (
        40,
        3,
        3,
        37,
    )
    assert run.first_error == error
    assert run.error == (
        "Stopped after attempting 3 of 40 test questions: 3 could not be ranked and 37 were not attempted "
        "because the run stopped (a run fails when more than 5% of its test questions (here 2) cannot be "
        "ranked, so its score would not be comparable). First error: " + error
    )


def test_failure_text_of_the_issue_example():
    # The run against a ranker that was down: 8 of 57 attempted, all 8 failed, 49 never asked.
    assert services.failure_text(total=57, attempted=8, failed=8, first_error="Ranker unavailable: x") == (
        "Stopped after attempting 8 of 57 test questions: 8 could not be ranked and 49 were not attempted "
        "because the run stopped (a run fails when more than 5% of its test questions (here 2) cannot be "
        "ranked, so its score would not be comparable). First error: Ranker unavailable: x"
    )
    assert services.failure_text(total=40, attempted=40, failed=4, first_error="") == (
        "4 of 40 test questions (10%) could not be ranked; a run fails when more than 5% of its test "
        "questions (here 2) cannot be ranked, so its score would not be comparable."
    )


def test_run_fails_with_reason_when_ranker_is_down(small, fast_retries):
    ranker = http_ranker(small, "http://127.0.0.1:1/rank")
    run = evaluate_inline(ranker)
    assert run.status == RunStatus.FAILED
    assert "could not be ranked" in run.error
    assert "cannot be reached" in run.error
    assert run.finished_at is not None


def test_run_retries_transient_errors_and_matches_clean_run(small, fake_ranker_server, fast_retries):
    clean = evaluate_inline(http_ranker(small, fake_ranker_server(rankings=RANKINGS).url, name="clean"))
    flaky_server = fake_ranker_server(rankings=RANKINGS, fail_first=2)
    flaky = evaluate_inline(http_ranker(small, flaky_server.url, name="flaky", retries=2))
    assert flaky.status == RunStatus.SUCCEEDED
    assert len(flaky_server.requests) == 6 * 3
    assert flaky.ndcg_mean == clean.ndcg_mean
    assert flaky.questions_failed == 0


def many_questions(n: int):
    """A collection of n test questions t1..tn, each with one perfect answer xi (and xi+1 rated 1)."""
    collection = collection_create(name="Many", slug="many")
    answers_upsert(
        collection=collection,
        records=[AnswerRecord(external_id=f"x{i}", title=f"answer {i}", body="") for i in range(1, n + 2)],
    )
    questions_upsert(
        collection=collection,
        records=[
            QuestionRecord(external_id=f"t{i}", text=f"question {i}", split=Split.TEST)
            for i in range(1, n + 1)
        ],
    )
    answers = {a.external_id: a for a in Answer.objects.filter(collection=collection)}
    rater = import_rater()
    for question in Question.objects.filter(collection=collection):
        i = int(question.external_id[1:])
        rating_record(rater=rater, question=question, answer=answers[f"x{i}"], stars=3)
    return collection


def good(n):
    return {f"t{i}": [f"x{i}", f"x{i + 1}"] for i in range(1, n + 1)}


def bad(n):
    return {f"t{i}": [f"x{i + 1}", f"x{i}"] for i in range(1, n + 1)}


@pytest.mark.parametrize(("failing", "status"), [(2, RunStatus.SUCCEEDED), (3, RunStatus.FAILED)])
def test_run_failure_limit_is_more_than_5_percent(fake_ranker_server, fast_retries, failing, status):
    collection = many_questions(40)
    server = fake_ranker_server(rankings=good(40), fail={f"t{i}" for i in range(1, failing + 1)})
    run = evaluate_inline(http_ranker(collection, server.url))
    assert run.status == status, run.error
    assert run.questions_failed == failing
    if status == RunStatus.SUCCEEDED:
        assert run.error == (
            "2 of 40 test questions could not be ranked and are left out. First error: Ranker unavailable: "
            f"ranker at {server.url} answered 500 Internal Server Error (1 attempt)"
        )
        assert run.ndcg_mean == 1.0
        assert run.scored_count == 38
    else:
        assert run.error.startswith("3 of 40 test questions (8%) could not be ranked")


def test_run_without_test_questions_fails_with_reason(collection, model_dir):
    ranker = Ranker.objects.create(collection=collection, name="BM25", kind=RankerKind.BUILTIN)
    run = evaluate_inline(ranker)
    assert run.status == RunStatus.FAILED
    assert run.error.startswith("This collection has no test questions")


def test_run_with_unusable_ranker_config_fails_every_question(small):
    ranker = Ranker.objects.create(collection=small, name="Broken", kind=RankerKind.HTTP, config={})
    run = evaluate_inline(ranker)
    assert run.status == RunStatus.FAILED
    assert "unusable config" in run.error
    assert run.questions_failed == 6


# ----------------------------------------------------------------------------------------- comparison


def _rate_next_answers_zero(collection) -> None:
    """x(i+1) rated 0 stars for t(i): "bad" then ranks a known wrong answer first (left unrated, it is
    unknown, and the comparison on rated answers cannot call it worse)."""
    answers = {a.external_id: a for a in Answer.objects.filter(collection=collection)}
    for question in Question.objects.filter(collection=collection):
        i = int(question.external_id[1:])
        rating_record(rater=import_rater(), question=question, answer=answers[f"x{i + 1}"], stars=0)


def test_second_run_compares_with_previous_on_same_labels(fake_ranker_server):
    collection = many_questions(30)
    _rate_next_answers_zero(collection)
    server = fake_ranker_server(rankings=bad(30))
    ranker = http_ranker(collection, server.url)
    first = evaluate_inline(ranker)
    server.rankings = good(30)
    second = evaluate_inline(ranker)
    assert (first.ndcg_mean, second.ndcg_mean) == (pytest.approx(1 / LOG2_3), 1.0)
    assert second.previous_run == first
    expected = compare_runs(np.ones(30), np.full(30, 1 / LOG2_3), seed=0)
    assert second.delta == pytest.approx(1 - 1 / LOG2_3)
    assert (second.delta_ci_low, second.delta_ci_high) == (
        pytest.approx(expected.ci_low),
        pytest.approx(expected.ci_high),
    )
    assert second.p_value == pytest.approx(expected.p_value)
    assert second.p_value < 0.001
    assert second.verdict == "real improvement"
    assert second.comparison_count == 30
    server.rankings = bad(30)
    third = evaluate_inline(ranker)
    assert third.previous_run == second
    assert third.verdict == "real drop"


def test_second_run_comparison_leaves_unrated_answers_out(fake_ranker_server):
    # x(i+1) unrated: the headline counts it as 0 stars above the perfect answer (1/log2(3)), but the
    # comparison, on rated answers, sees the same order of what is known: no change.
    collection = many_questions(10)
    server = fake_ranker_server(rankings=bad(10))
    ranker = http_ranker(collection, server.url)
    first = evaluate_inline(ranker)
    server.rankings = good(10)
    second = evaluate_inline(ranker)
    assert (first.ndcg_mean, second.ndcg_mean) == (pytest.approx(1 / LOG2_3), 1.0)
    assert (second.delta, second.verdict, second.comparison_count) == (0.0, "within noise", 10)


def test_comparison_rescores_previous_run_with_new_labels(fake_ranker_server):
    collection = many_questions(10)
    server = fake_ranker_server(rankings=good(10))
    ranker = http_ranker(collection, server.url)
    first = evaluate_inline(ranker)
    # New ratings: x2 is perfect for t1 too. Same rankings, so the comparison must show no change.
    rating_record(
        rater=import_rater(),
        question=Question.objects.get(collection=collection, external_id="t1"),
        answer=Answer.objects.get(collection=collection, external_id="x2"),
        stars=3,
    )
    second = evaluate_inline(ranker)
    assert first.ndcg_mean == 1.0
    assert second.label_count == first.label_count + 1
    assert second.delta == 0.0
    assert second.previous_ndcg_mean == second.ndcg_mean
    assert second.verdict == "within noise"


def test_failed_run_is_not_the_previous_run(small, fake_ranker_server, fast_retries):
    server = fake_ranker_server(rankings=RANKINGS)
    ranker = http_ranker(small, server.url)
    first = evaluate_inline(ranker)
    server.fail = {"q1", "q2"}
    failed = evaluate_inline(ranker)
    server.fail = set()
    third = evaluate_inline(ranker)
    assert failed.status == RunStatus.FAILED
    assert third.previous_run == first
    assert [p.run_id for p in selectors.history(ranker=ranker)] == [first.pk, third.pk]


# ----------------------------------------------------------------------------------------- chunks and resume


def test_run_fans_out_in_chunks(builtin_ranker, settings):
    settings.EVALUATION_CHUNK_SIZE = 4
    run = evaluate_inline(builtin_ranker)
    assert (run.chunks_total, run.chunks_done) == (2, 2)
    assert list(run.chunks.values_list("question_ids", flat=True)) == [
        list(Question.objects.filter(split=Split.TEST).order_by("pk").values_list("pk", flat=True))[:4],
        list(Question.objects.filter(split=Split.TEST).order_by("pk").values_list("pk", flat=True))[4:],
    ]
    assert QuestionResult.objects.filter(run=run).count() == 6


def test_redelivered_run_message_does_nothing(builtin_ranker):
    run = evaluate_inline(builtin_ranker)
    assert services.run_plan(run_id=run.pk, worker="other@host") == []
    assert EvaluationChunk.objects.filter(run=run).count() == 1


def test_redelivered_chunk_message_adds_no_rows_and_counts_once(builtin_ranker):
    run = evaluate_inline(builtin_ranker)
    chunk = run.chunks.get()
    services.chunk_evaluate(chunk_id=chunk.pk, worker="inline@test", token=f"token-{chunk.pk}")
    services.chunk_evaluate(chunk_id=chunk.pk, worker="other@host", token="another")
    run.refresh_from_db()
    assert run.chunks_done == 1
    assert QuestionResult.objects.filter(run=run).count() == 6


def test_resume_after_worker_died_mid_chunk_equals_clean_run(builtin_ranker, settings):
    settings.EVALUATION_CHUNK_SIZE = 4
    clean = evaluate_inline(builtin_ranker)
    clean_rows = list(
        QuestionResult.objects.filter(run=clean).order_by("question_id").values("question_id", "ndcg", "dcg")
    )

    with transaction.atomic():
        run = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    first, second = services.run_plan(run_id=run.pk, worker="dead@host")
    services.chunk_evaluate(chunk_id=first, worker="dead@host", token="t1")
    # The dead worker had claimed the second chunk and stored one answer before it was killed.
    chunk = EvaluationChunk.objects.get(pk=second)
    assert chunks._chunk_claim(chunk_id=second, worker="dead@host", token="t2")
    one = Question.objects.get(pk=chunk.question_ids[0])
    chunks._chunk_rank(run=run, chunk=chunk, backend=get_backend(builtin_ranker), questions=[one])
    run.refresh_from_db()
    assert (run.status, run.questions_done, run.chunks_done) == (RunStatus.RUNNING, 5, 1)

    # Its node restarts: the chunk is handed back and finished, without touching the stored row.
    from django.utils import timezone

    stored = QuestionResult.objects.get(run=run, question=one).pk
    assert services.evaluations_resume(worker="dead@host", since=timezone.now()) == [second]
    assert EvaluationChunk.objects.get(pk=second).status == ChunkStatus.PENDING
    services.chunk_evaluate(chunk_id=second, worker="dead@host", token="t3")
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert QuestionResult.objects.get(run=run, question=one).pk == stored
    rows = list(
        QuestionResult.objects.filter(run=run).order_by("question_id").values("question_id", "ndcg", "dcg")
    )
    assert rows == clean_rows
    assert (run.ndcg_mean, run.ndcg_ci_low, run.ndcg_ci_high, run.accuracy_mean) == (
        clean.ndcg_mean,
        clean.ndcg_ci_low,
        clean.ndcg_ci_high,
        clean.accuracy_mean,
    )


def test_resume_leaves_chunks_of_live_workers_alone(builtin_ranker):
    from django.utils import timezone

    with transaction.atomic():
        run = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    (chunk_id,) = services.run_plan(run_id=run.pk, worker="alive@host")
    assert chunks._chunk_claim(chunk_id=chunk_id, worker="alive@host", token="t1")
    assert services.evaluations_resume(worker="other@host", since=timezone.now()) == []
    # Another worker's message for the chunk cannot take it while its heartbeat is fresh.
    assert not chunks._chunk_claim(chunk_id=chunk_id, worker="other@host", token="t2")


def test_stale_chunk_is_taken_over_by_another_worker(builtin_ranker, settings):
    from datetime import timedelta

    from django.utils import timezone

    with transaction.atomic():
        run = evaluation_start(ranker=builtin_ranker, trigger=RunTrigger.UI)
    (chunk_id,) = services.run_plan(run_id=run.pk, worker="gone@host")
    assert chunks._chunk_claim(chunk_id=chunk_id, worker="gone@host", token="t1")
    EvaluationChunk.objects.filter(pk=chunk_id).update(heartbeat_at=timezone.now() - timedelta(minutes=10))
    assert services.evaluations_resume(worker="other@host", since=timezone.now()) == [chunk_id]
    services.chunk_evaluate(chunk_id=chunk_id, worker="other@host", token="t2")
    run.refresh_from_db()
    assert run.status == RunStatus.SUCCEEDED
    assert EvaluationChunk.objects.get(pk=chunk_id).claimed_by == "other@host"


def test_scheduled_evaluations_start_default_rankers(builtin_ranker, small, other_collection):
    Ranker.objects.create(collection=small, name="Not default", kind=RankerKind.BUILTIN)
    runs = services.scheduled_evaluations_start()
    assert [(r.ranker, r.trigger) for r in runs] == [(builtin_ranker, RunTrigger.SCHEDULE)]
