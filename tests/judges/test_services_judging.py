"""Judging runs against the reference judge server over real HTTP (the run's service, in process)."""

from __future__ import annotations

import logging

import pytest
from django.core.exceptions import ValidationError

from judges.models import Judging, JudgingStatus
from judges.services import (
    JudgingConflict,
    judge_create,
    judge_test,
    judging_cancel,
    judging_resume,
    judging_run,
    judging_start,
)
from ratings.models import Rating, RatingSource

HUMAN_PAIRS = 8  # see conftest.HUMAN; all are in the overlap sample only by chance, so runs use "questions"
TRAINING_PAIRS = 4  # of them on training questions (q1, q2): what the builtin judge calibrates on


def _chat_judge(judged, server, **fields):
    # No rate limit unless a test sets one: the default (60 a minute) made each run here last a second a
    # request, and the limiter has its own tests (test_client.py).
    fields.setdefault("requests_per_minute", 0)
    return judge_create(
        collection=judged.collection,
        name=fields.pop("name", "Reference"),
        kind="openai-chat",
        base_url=server.url,
        model="reference-judge",
        **fields,
    )


def _start(judge, **options):
    options.setdefault("selection", "questions")
    options.setdefault("question_ids", ["q1", "q2", "q3", "q4"])
    return judging_start(judge=judge, **options)


def _judged_stars(judge) -> dict[tuple[str, str], int]:
    return {
        (r.question.external_id, r.answer.external_id): r.stars
        for r in Rating.objects.filter(rater_id=judge.account.user_id).select_related("question", "answer")
    }


def test_run_judges_each_pair_with_the_servers_grades(judged, judge_server):
    judge = _chat_judge(judged, judge_server, concurrency=4, requests_per_minute=0)
    judging = _start(judge)

    done = judging_run(judging_id=judging.pk, worker="test")

    stars = _judged_stars(judge)
    assert done.status == JudgingStatus.SUCCEEDED, done.error
    assert done.judged == len(judging.pairs) == len(stars)
    # The server grades from the labels: people's grade where they rated, 0 elsewhere.
    for (q, a), grade in stars.items():
        assert grade == {
            ("q1", "a1"): 3,
            ("q2", "a2"): 3,
            ("q2", "a4"): 1,
            ("q3", "a3"): 3,
            ("q4", "a6"): 2,
        }.get((q, a), 0)
    assert done.requests == done.judged and done.retries == 0
    assert done.prompt_tokens > 0 and done.completion_tokens == done.judged
    rating = Rating.objects.filter(rater_id=judge.account.user_id).first()
    assert rating.source == RatingSource.JUDGE and rating.reply in {"0", "1", "2", "3"}


def test_run_retries_429_with_retry_after_and_5xx(judged, judge_server_factory):
    server = judge_server_factory("--rate-limit-first", "2", "--retry-after", "0.2", "--fail-first", "1")
    judge = _chat_judge(judged, server, concurrency=1, requests_per_minute=0)
    judging = _start(judge, question_ids=["q1"])

    done = judging_run(judging_id=judging.pk, worker="test")

    assert done.status == JudgingStatus.SUCCEEDED, done.error
    assert done.retries == 3
    assert done.requests == done.judged + 3


def test_wrong_key_fails_the_run_and_never_shows_the_key(judged, judge_server_factory, caplog):
    server = judge_server_factory("--api-key", "right-key")
    judge = _chat_judge(judged, server, api_key="sk-wrong-secret-123")
    judging = _start(judge)

    with caplog.at_level(logging.DEBUG):
        done = judging_run(judging_id=judging.pk, worker="test")

    assert done.status == JudgingStatus.FAILED
    assert "refused the API key (HTTP 401)" in done.error
    assert "sk-wrong-secret-123" not in done.error + caplog.text
    assert done.judged == 0


def test_right_key_is_sent_as_bearer(judged, judge_server_factory):
    server = judge_server_factory("--api-key", "right-key")
    judge = _chat_judge(judged, server, api_key="right-key")
    done = judging_run(judging_id=_start(judge, question_ids=["q1"]).pk, worker="test")

    assert done.status == JudgingStatus.SUCCEEDED, done.error


def test_unreachable_judge_fails_with_reason(judged, monkeypatch):
    from judges.services import grading
    from tests.servers import free_port

    judge = judge_create(
        collection=judged.collection,
        name="Nowhere",
        kind="openai-chat",
        base_url=f"http://127.0.0.1:{free_port()}/v1",
        model="m",
        timeout_seconds=2,
        requests_per_minute=0,
    )
    judging = _start(judge, question_ids=["q1"])
    # One retry, not four (the graders' default, read from judges.client when grading was imported).
    monkeypatch.setattr(grading, "RETRIES", 1)
    done = judging_run(judging_id=judging.pk, worker="test")

    assert done.status == JudgingStatus.FAILED
    assert "is unreachable: the connection was refused" in done.error and "gave up after" in done.error


def test_malformed_replies_fail_the_run_saying_why(judged, judge_server_factory):
    server = judge_server_factory("--malformed")
    judge = _chat_judge(judged, server, concurrency=1)
    done = judging_run(judging_id=_start(judge).pk, worker="test")

    assert done.status == JudgingStatus.FAILED
    assert "could be used" in done.error and "expected one digit 0–3" in done.error
    assert done.judged == 0 and done.failed == len(done.pairs)
    assert done.pair_errors[0]["error"].startswith("expected one digit 0–3")


def test_grade_outside_scale_is_an_error_on_the_pair(judged, judge_server_factory):
    server = judge_server_factory("--out-of-range")
    judge = _chat_judge(judged, server)
    done = judging_run(judging_id=_start(judge, question_ids=["q1"]).pk, worker="test")

    assert done.judged == 0
    assert "the judge answered grade 7, outside 0–3" in done.pair_errors[0]["error"]
    assert not Rating.objects.filter(rater_id=judge.account.user_id).exists()


@pytest.mark.parametrize(("reply", "fmt"), [("json", "json"), ("reasoning", "reasoning")])
def test_reply_formats_are_read(judged, judge_server_factory, reply, fmt):
    server = judge_server_factory("--reply", reply)
    judge = _chat_judge(judged, server, reply_format=fmt)
    done = judging_run(judging_id=_start(judge, question_ids=["q1"]).pk, worker="test")

    assert done.status == JudgingStatus.SUCCEEDED, done.error
    assert _judged_stars(judge)[("q1", "a1")] == 3
    reply_text = Rating.objects.get(
        rater_id=judge.account.user_id, question=judged.q("q1"), answer=judged.a("a1")
    )
    assert "3" in reply_text.reply


def test_budget_stops_the_run_and_resume_finishes_it(judged, judge_server):
    judge = _chat_judge(judged, judge_server, concurrency=1)
    judging = _start(judge, budget_tokens=1)

    stopped = judging_run(judging_id=judging.pk, worker="test")

    assert stopped.status == JudgingStatus.FAILED
    assert "budget of 1 tokens" in stopped.error
    kept = stopped.judged
    assert 1 <= kept < len(judging.pairs)
    Judging.objects.filter(pk=judging.pk).update(budget_tokens=0)
    resumed = judging_resume(judging=stopped)
    assert resumed.status == JudgingStatus.QUEUED
    finished = judging_run(judging_id=judging.pk, worker="test")
    assert finished.status == JudgingStatus.SUCCEEDED
    assert finished.judged == len(judging.pairs) == len(_judged_stars(judge))


def test_cancel_a_queued_run_and_conflict_while_active(judged, judge_server):
    judge = _chat_judge(judged, judge_server)
    judging = _start(judge)
    with pytest.raises(JudgingConflict):
        _start(judge)

    cancelled = judging_cancel(judging=judging)

    assert cancelled.status == JudgingStatus.CANCELLED
    assert judging_run(judging_id=judging.pk, worker="test") is None  # nothing to claim


def test_cancel_requested_stops_a_running_run_keeping_what_it_judged(judged, judge_server):
    judge = _chat_judge(judged, judge_server, concurrency=1)
    judging = _start(judge)
    Judging.objects.filter(pk=judging.pk).update(cancel_requested=True)

    done = judging_run(judging_id=judging.pk, worker="test")

    assert done.status == JudgingStatus.CANCELLED
    assert 1 <= done.judged < len(judging.pairs)
    assert Rating.objects.filter(rater_id=judge.account.user_id).count() == done.judged


def test_builtin_judge_is_deterministic_and_calibrated(judged):
    judge = judge_create(collection=judged.collection, name="Builtin", kind="builtin")
    done = judging_run(judging_id=_start(judge).pk, worker="test")
    first = _judged_stars(judge)

    assert done.status == JudgingStatus.SUCCEEDED and done.requests == 0
    judge.refresh_from_db()
    assert judge.calibration["labels"] == TRAINING_PAIRS
    assert len(judge.calibration["thresholds"]) == 3
    assert "Grade:" in Rating.objects.filter(rater_id=judge.account.user_id).first().reply
    Rating.objects.filter(rater_id=judge.account.user_id).delete()
    judging_run(judging_id=_start(judge).pk, worker="test")
    assert _judged_stars(judge) == first


def test_start_refuses_bad_selection_and_nothing_to_judge(judged, judge_server):
    judge = _chat_judge(judged, judge_server)
    with pytest.raises(ValidationError, match="Selection must be one of"):
        judging_start(judge=judge, selection="everything")
    with pytest.raises(ValidationError, match="No question 'nope'"):
        judging_start(judge=judge, selection="questions", question_ids=["nope"])
    with pytest.raises(ValidationError, match="Limit must be"):
        judging_start(judge=judge, selection="queue", limit=0)
    assert not Judging.objects.exists()


def test_create_refuses_template_without_placeholders_and_missing_url(judged):
    with pytest.raises(ValidationError) as error:
        judge_create(
            collection=judged.collection, name="Bad", kind="openai-chat", prompt_template="Grade {answer}."
        )
    assert error.value.message_dict["prompt_template"] == ["The prompt template must contain {question}."]
    assert "base URL" in error.value.message_dict["base_url"][0]
    assert "model" in error.value.message_dict


def test_metadata_address_is_refused(judged):
    with pytest.raises(ValidationError, match="link-local or cloud metadata"):
        judge_create(
            collection=judged.collection,
            name="Meta",
            kind="openai-chat",
            base_url="http://169.254.169.254/v1",
            model="m",
        )


def test_test_connection_shows_the_raw_reply(judged, judge_server_factory):
    server = judge_server_factory("--reply", "reasoning")
    judge = _chat_judge(judged, server, reply_format="reasoning")

    outcome = judge_test(judge=judge)

    assert outcome.error == "" and outcome.stars == 3
    assert outcome.reply.endswith("Grade: 3") and "Question: how does the boundary layer" in outcome.prompt


def test_test_connection_wrong_key_says_so(judged, judge_server_factory):
    server = judge_server_factory("--api-key", "right-key")
    judge = _chat_judge(judged, server, api_key="k2-secret")

    outcome = judge_test(judge=judge)

    assert "refused the API key (HTTP 401)" in outcome.error and "k2-secret" not in outcome.error


def _certainties(judge) -> dict[tuple[str, str], float | None]:
    return {
        (r.question.external_id, r.answer.external_id): r.certainty
        for r in Rating.objects.filter(rater_id=judge.account.user_id).select_related("question", "answer")
    }


def test_logprobs_judge_stores_each_grades_probability(judged, judge_server):
    judge = _chat_judge(judged, judge_server, name="Sure", logprobs=True)

    done = judging_run(judging_id=_start(judge, question_ids=["q1"]).pk, worker="test")

    # The server answers the label with probability 0.9 and one other grade with 0.1 (both listed).
    assert done.status == JudgingStatus.SUCCEEDED, done.error
    certainties = list(_certainties(judge).values())
    assert len(certainties) == done.judged > 0
    assert certainties == [pytest.approx(0.9)] * done.judged


def test_json_confidence_wins_and_no_logprobs_means_no_certainty(judged, judge_server_factory):
    server = judge_server_factory("--reply", "json", "--confidence", "--noise", "1")
    said = _chat_judge(judged, server, name="Says", reply_format="json")
    silent = _chat_judge(judged, judge_server_factory(), name="Silent")

    judging_run(judging_id=_start(said, question_ids=["q1"]).pk, worker="test")
    judging_run(judging_id=_start(silent, question_ids=["q1"]).pk, worker="test")

    # --noise 1 moves every grade off its label: the reply says confidence 0.6.
    assert set(_certainties(said).values()) == {0.6}
    assert set(_certainties(silent).values()) == {None}


def test_builtin_certainty_is_the_distance_from_the_nearest_threshold(judged):
    from judges import builtin
    from judges.selectors import human_labelled_pairs

    judge = judge_create(collection=judged.collection, name="Near", kind="builtin")
    judging_run(judging_id=_start(judge, question_ids=["q1", "q3"]).pk, worker="test")
    judge.refresh_from_db()
    labelled = [
        (p.question_id, p.question, p.answer_external_id, p.stars)
        for p in human_labelled_pairs(collection=judged.collection, split="train")
    ]
    scorer = builtin.scorer_for(collection=judged.collection, labelled=labelled)
    thresholds = judge.calibration["thresholds"]

    ratings = Rating.objects.filter(rater_id=judge.account.user_id).select_related("question", "answer")
    assert ratings.count() > 0
    for rating in ratings:
        score = scorer.score(rating.question.text, rating.answer.external_id, rating.question_id)
        assert rating.certainty == pytest.approx(min(abs(score - t) for t in thresholds))


def test_builtin_judge_propagates_from_training_questions_only(judged):
    from judges import builtin

    judge = judge_create(collection=judged.collection, name="Propagating", kind="builtin")
    judging_run(judging_id=_start(judge, question_ids=["q3"]).pk, worker="test")
    judge.refresh_from_db()
    q1, q2, q3 = judged.q("q1"), judged.q("q2"), judged.q("q3")
    labelled = [(q1.pk, q1.text, "a1", 2), (q2.pk, q2.text, "a2", 0)]  # overall mean 1.0
    alone = builtin.scorer_for(collection=judged.collection, labelled=labelled)

    assert judge.calibration["signal"] == "propagation-mean" and judge.calibration["fallback"] == ""
    # A test question's pair gets its training neighbours' stars: a1 from q1 (2), a2 from q2 (0).
    assert alone.mean(q3.pk, q3.text, "a1") == 2.0
    assert alone.mean(q3.pk, q3.text, "a2") == 0.0
    # Nobody rated a5: the overall mean. A training question is never its own neighbour: q1's a1 was
    # rated by q1 only, so it gets the overall mean too, while q1's a2 comes from q2.
    assert alone.mean(q3.pk, q3.text, "a5") == 1.0
    assert alone.mean(q1.pk, q1.text, "a1") == 1.0
    assert alone.mean(q1.pk, q1.text, "a2") == 0.0
    assert alone.score(q3.text, "a1", q3.pk) == pytest.approx(2.0 + 0.001 * alone.ratio(q3.text, "a1"))
    reply = Rating.objects.filter(rater_id=judge.account.user_id).first().reply
    assert "similar training questions' mean stars" in reply and "Grade:" in reply


def test_builtin_judge_without_training_labels_uses_the_bm25_ratio_and_says_so(judged):
    from judges import builtin

    scorer = builtin.scorer_for(collection=judged.collection, labelled=[])

    assert scorer.neighbours is None
    assert scorer.score(judged.q("q1").text, "a1") == scorer.ratio(judged.q("q1").text, "a1") == 1.0
    assert "no human labels of training questions yet" in scorer.describe(judged.q("q1").text, "a1")


def test_builtin_judge_without_the_embedding_model_falls_back_and_says_why(judged, monkeypatch):
    from rankers import semantic
    from rankers.embedding import EmbeddingUnavailable

    def missing(**kwargs):
        raise EmbeddingUnavailable("The embedding model package is not installed")

    semantic.forget_vectors()  # cached question vectors would hide the missing model
    monkeypatch.setattr(semantic.encoding, "load_encoder", missing)
    monkeypatch.setattr(semantic.build, "load_encoder", missing)
    judge = judge_create(collection=judged.collection, name="No model", kind="builtin")

    done = judging_run(judging_id=_start(judge, question_ids=["q1"]).pk, worker="test")

    judge.refresh_from_db()
    assert done.status == JudgingStatus.SUCCEEDED, done.error
    assert judge.calibration["signal"] == "bm25-ratio"
    assert judge.calibration["fallback"] == (
        "question embeddings unavailable (The embedding model package is not installed), "
        "so the BM25 ratio alone"
    )
    reply = Rating.objects.filter(rater_id=judge.account.user_id).first().reply
    assert reply.startswith("BM25 ratio ") and "question embeddings unavailable" in reply
