"""Announcing versions and starting, listing and reading evaluations through the API."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from config.celery import app as celery_app
from corpus.models import Question
from evaluation.models import EvaluationRun, QuestionResult, RunStatus, RunTrigger
from rankers.models import RankerVersion
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from trainer.services import api_token_create

pytestmark = pytest.mark.django_db


@pytest.fixture
def dead_broker():
    previous = celery_app.conf.broker_url
    celery_app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        yield
    finally:
        celery_app.conf.broker_url = previous


def test_api_version_announce_starts_evaluation(api_data, caller, trainer):
    response = caller("trainer_token").post(
        f"/api/rankers/{api_data.ranker.pk}/versions/",
        {"label": "build-42", "notes": "more features"},
        format="json",
    )

    assert response.status_code == 202
    body = response.json()
    run = EvaluationRun.objects.get(pk=body["evaluation"]["id"])
    assert response["Location"] == body["evaluation"]["url"] == f"http://testserver/api/evaluations/{run.pk}/"
    assert (run.trigger, run.ranker_version.label, run.status, run.created_by) == (
        RunTrigger.VERSION,
        "build-42",
        RunStatus.PENDING,
        trainer,
    )
    assert (body["version"]["label"], body["version"]["notes"]) == ("build-42", "more features")


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({}, {"label": ["This field is required."]}),
        ({"label": "v1"}, {"label": ["Version 'v1' of this ranker was already announced."]}),
        ({"label": "x" * 101}, {"label": ["Ensure this field has no more than 100 characters."]}),
    ],
)
def test_api_version_announce_invalid(api_data, caller, body, errors):
    response = caller("trainer").post(f"/api/rankers/{api_data.ranker.pk}/versions/", body, format="json")

    assert (response.status_code, response.json()) == (400, errors)
    assert RankerVersion.objects.filter(ranker=api_data.ranker).count() == 1


def test_api_version_announce_builtin_is_400(api_data, caller):
    response = caller("trainer").post(
        f"/api/rankers/{api_data.builtin.pk}/versions/", {"label": "x"}, format="json"
    )

    assert response.json() == {
        "ranker": ["Builtin rankers get versions by training here, not by announcing."]
    }


def test_api_version_announce_broker_down_is_503_and_stores_nothing(api_data, caller, dead_broker):
    response = caller("trainer").post(
        f"/api/rankers/{api_data.ranker.pk}/versions/", {"label": "v2"}, format="json"
    )

    assert response.status_code == 503
    assert "task queue (Redis) is not reachable" in response.json()["detail"]
    assert not RankerVersion.objects.filter(ranker=api_data.ranker, label="v2").exists()


def test_api_evaluation_start_latest_version(api_data, caller):
    # A finished run, so starting another one is not folded into the active one.
    EvaluationRun.objects.filter(pk=api_data.run.pk).update(status=RunStatus.SUCCEEDED)

    response = caller("trainer").post(f"/api/rankers/{api_data.ranker.pk}/evaluations/", {}, format="json")

    assert response.status_code == 202
    run = EvaluationRun.objects.get(pk=response.json()["evaluation"]["id"])
    assert (run.trigger, run.ranker_version, run.pk != api_data.run.pk) == (
        RunTrigger.API,
        api_data.version,
        True,
    )
    assert response["Location"].endswith(f"/api/evaluations/{run.pk}/")


def test_api_evaluation_start_while_one_is_active_returns_it(api_data, caller):
    response = caller("trainer").post(
        f"/api/rankers/{api_data.ranker.pk}/evaluations/", {"version": "v1"}, format="json"
    )

    assert (response.status_code, response.json()["evaluation"]["id"]) == (202, api_data.run.pk)


def test_api_evaluation_start_unknown_version_is_400(api_data, caller):
    response = caller("trainer").post(
        f"/api/rankers/{api_data.ranker.pk}/evaluations/", {"version": "v9"}, format="json"
    )

    assert (response.status_code, response.json()) == (
        400,
        {"version": [f"Ranker {api_data.ranker.pk} has no version 'v9'."]},
    )


def test_api_evaluation_start_broker_down_is_503(api_data, caller, dead_broker):
    response = caller("trainer").post(f"/api/rankers/{api_data.builtin.pk}/evaluations/", {}, format="json")

    assert response.status_code == 503
    assert EvaluationRun.objects.filter(ranker=api_data.builtin).count() == 0


def test_api_evaluations_history_newest_first(api_data, caller):
    EvaluationRun.objects.filter(pk=api_data.run.pk).update(status=RunStatus.FAILED, error="ranker down")
    newer = (
        caller("trainer").post(f"/api/rankers/{api_data.ranker.pk}/evaluations/", {}, format="json").json()
    )

    body = caller("rater").get(f"/api/rankers/{api_data.ranker.pk}/evaluations/").json()

    assert [r["id"] for r in body["results"]] == [newer["evaluation"]["id"], api_data.run.pk]
    assert (body["results"][1]["status"], body["results"][1]["error"]) == ("failed", "ranker down")


def evaluated_test_question(api_data) -> EvaluationRun:
    """The run, succeeded, with one result: test question q2, labels [None, 2]."""
    run = api_data.run
    question = Question.objects.get(collection=api_data.collection, external_id="q2")
    EvaluationRun.objects.filter(pk=run.pk).update(
        status=RunStatus.SUCCEEDED, questions_total=1, questions_done=1, ndcg_mean=0.63, accuracy_mean=1.0
    )
    QuestionResult.objects.create(
        run=run,
        question=question,
        ranked_answer_ids=["a3", "a2"],
        labels=[None, 2],
        dcg=1.26,
        ideal_dcg=2.0,
        ndcg=0.63,
        accuracy_hit=True,
    )
    return run


def test_api_evaluation_detail_has_metrics_and_questions(api_data, caller):
    run = evaluated_test_question(api_data)

    body = caller("trainer_token").get(f"/api/evaluations/{run.pk}/").json()

    assert (
        body["status"],
        body["progress_percent"],
        body["ndcg_mean"],
        body["accuracy_mean"],
        body["ndcg_k"],
    ) == (
        "succeeded",
        100,
        0.63,
        1.0,
        10,
    )
    assert (body["ranker"], body["version"], body["collection"]) == (api_data.ranker.pk, "v1", "tiny")
    assert body["questions"] == [
        {
            "question_id": "q2",
            "question": "shock waves",
            "ndcg": 0.63,
            "dcg": 1.26,
            "ideal_dcg": 2.0,
            "accuracy_hit": True,
            "ranked_answer_ids": ["a3", "a2"],
            "labels": [None, 2],
            "unlabelled_in_top_k": 0,
            "unknown_answer_ids": [],
            "error": "",
        }
    ]


@pytest.mark.parametrize("kind", ["rater", "rater_token", "trainer_rater_token"])
def test_api_evaluation_detail_rater_gets_no_test_labels(api_data, caller, kind, trainer):
    """Raters (sessions and tokens, also a trainer's rater token) see the run and its headline, but not the
    labels of test questions nor the per-question figures computed from them: ground-truth's rule."""
    run = evaluated_test_question(api_data)
    if kind == "trainer_rater_token":
        client = APIClient()
        client.credentials(
            HTTP_AUTHORIZATION=f"Token {api_token_create(collection=api_data.collection, user=trainer)[1]}"
        )
    else:
        client = caller(kind)

    body = client.get(f"/api/evaluations/{run.pk}/").json()

    assert (body["status"], body["ndcg_mean"], body["accuracy_mean"]) == ("succeeded", 0.63, 1.0)
    assert body["questions"] == [
        {
            "question_id": "q2",
            "question": "shock waves",
            "ndcg": None,
            "dcg": None,
            "ideal_dcg": None,
            "accuracy_hit": None,
            "ranked_answer_ids": ["a3", "a2"],
            "labels": None,
            "unlabelled_in_top_k": 0,
            "unknown_answer_ids": [],
            "error": "",
        }
    ]


def test_api_evaluation_detail_trainer_session_gets_test_labels(api_data, caller):
    run = evaluated_test_question(api_data)

    body = caller("trainer").get(f"/api/evaluations/{run.pk}/").json()

    assert [(q["labels"], q["ndcg"]) for q in body["questions"]] == [([None, 2], 0.63)]


def test_api_evaluation_detail_unknown_is_404(caller):
    assert caller("trainer").get("/api/evaluations/999999/").status_code == 404


def test_api_evaluation_of_stopped_run_says_attempted_failed_not_attempted_and_first_error(api_data, caller):
    # As a run against a ranker that is down finishes: 8 of 57 attempted, all failed, 49 never asked.
    EvaluationRun.objects.filter(pk=api_data.run.pk).update(
        status=RunStatus.FAILED,
        questions_total=57,
        questions_done=8,
        questions_failed=8,
        first_error="Ranker unavailable: ranker at http://127.0.0.1:9/ cannot be reached (3 attempts)",
        error="Stopped after attempting 8 of 57 test questions: ...",
    )

    body = caller("trainer_token").get(f"/api/evaluations/{api_data.run.pk}/").json()

    assert {
        key: body[key]
        for key in ("questions_total", "questions_attempted", "questions_failed", "questions_not_attempted")
    } == {
        "questions_total": 57,
        "questions_attempted": 8,
        "questions_failed": 8,
        "questions_not_attempted": 49,
    }
    assert body["first_error"] == (
        "Ranker unavailable: ranker at http://127.0.0.1:9/ cannot be reached (3 attempts)"
    )
    listed = caller("trainer_token").get(f"/api/rankers/{api_data.ranker.pk}/evaluations/").json()
    assert listed["results"][0]["questions_not_attempted"] == 49
