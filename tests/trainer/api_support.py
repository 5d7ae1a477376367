"""Shared data and clients for the API tests (imported by their test modules).

Throttling stays on in the app; these tests lift the rates (the throttling test lowers them), because
the throttle counters live in the shared cache and would otherwise carry over between tests.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Answer, Collection, Question, Role, Split
from corpus.services import answers_upsert, questions_upsert
from evaluation.models import EvaluationRun, RunTrigger
from evaluation.services import evaluation_start
from rankers.models import Ranker, RankerVersion
from rankers.services import ranker_create
from ratings.services import rating_record
from trainer.models import Training, TrainingStatus
from trainer.services import api_token_create


@pytest.fixture(autouse=True)
def lifted_throttle(monkeypatch, settings):
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "100000/min", "user": "100000/min"})


@dataclass
class ApiData:
    collection: Collection
    ranker: Ranker
    version: RankerVersion
    run: EvaluationRun
    builtin: Ranker
    builtin_v2: RankerVersion
    training: Training


def fill(collection: Collection, rater) -> None:
    answers_upsert(
        collection=collection,
        records=[
            AnswerRecord("a1", "Boundary layer", "The boundary layer of a flat plate."),
            AnswerRecord("a2", "Shock waves", "Shock waves in supersonic flow."),
            AnswerRecord("a3", "Heat transfer", "Heat transfer at hypersonic speed."),
        ],
    )
    questions_upsert(
        collection=collection,
        records=[
            QuestionRecord("q1", "boundary layer", Split.TRAIN),
            QuestionRecord("q2", "shock waves", Split.TEST),
        ],
    )
    q1, q2 = (Question.objects.get(collection=collection, external_id=q) for q in ("q1", "q2"))
    a1, a2 = (Answer.objects.get(collection=collection, external_id=a) for a in ("a1", "a2"))
    rating_record(rater=rater, question=q1, answer=a1, stars=3)
    rating_record(rater=rater, question=q1, answer=a2, stars=0)
    rating_record(rater=rater, question=q2, answer=a2, stars=2)


@pytest.fixture
def api_data(collection, rater, trainer) -> ApiData:
    fill(collection, rater)
    ranker = ranker_create(
        collection=collection,
        name="Service",
        kind="http",
        config={"url": "http://127.0.0.1:9/", "auth_header": "k"},
    )
    builtin = ranker_create(collection=collection, name="Built-in", kind="builtin", is_default=True)
    # A comparison as a training's decision keeps it, so the schema test checks its documented shape.
    comparison = {
        "k": 10,
        "questions": 2,
        "challenger_ndcg": 0.9,
        "champion_ndcg": 0.8,
        "difference": 0.1,
        "ci_low": 0.0,
        "ci_high": 0.2,
        "p_value": 0.5,
        "improved": 1,
        "worsened": 0,
        "verdict": "within noise",
        "champion": "v0",
        "champion_id": 1,
        "predicted": {
            "probability": None,
            "expected_difference": 0.013,
            "verdict": "",
            "verdict_shares": [0.07, 0.93, 0.0],
            "ratings_to_settle": 299,
        },
    }
    version = RankerVersion.objects.create(ranker=ranker, label="v1", comparison=comparison)
    run = evaluation_start(ranker=ranker, ranker_version=version, trigger=RunTrigger.API, created_by=trainer)
    builtin_v2 = RankerVersion.objects.create(ranker=builtin, label="v2", method="bm25")
    training = Training.objects.create(
        ranker=builtin, status=TrainingStatus.SUCCEEDED, version=builtin_v2, decision="kept", progress=1.0
    )
    return ApiData(
        collection=collection,
        ranker=ranker,
        version=version,
        run=run,
        builtin=builtin,
        builtin_v2=builtin_v2,
        training=training,
    )


@pytest.fixture
def caller(rater, trainer, outsider, collection, other_collection):
    """caller(kind) -> an APIClient authenticated as: anonymous, rater, trainer (sessions),
    rater_token, trainer_token (tokens of the collection), other_token (a trainer token of another one)."""

    def make(kind: str) -> APIClient:
        client = APIClient()
        if kind in {"rater", "trainer"}:
            client.force_login(rater if kind == "rater" else trainer)
        elif kind in {"rater_token", "trainer_token"}:
            user, role = (rater, Role.RATER) if kind == "rater_token" else (trainer, Role.TRAINER)
            _, key = api_token_create(collection=collection, user=user, role=role)
            client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        elif kind == "other_token":
            _, key = api_token_create(collection=other_collection, user=outsider, role=Role.TRAINER)
            client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        elif kind != "anonymous":
            raise ValueError(kind)
        return client

    return make
