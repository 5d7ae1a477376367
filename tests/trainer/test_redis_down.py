"""Redis down: the cache is not a dependency. Reads and saves work (the throttle lets requests through),
starting a job answers 503 with nothing stored, and /healthz says the broker is down.

"Down" is a Redis URL at a port where nothing listens (connections are refused at once).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import caches
from django.test import Client
from rest_framework.throttling import SimpleRateThrottle

from config.celery import app as celery_app
from evaluation.models import EvaluationRun
from ratings.models import Rating
from tests.evaluation.conftest import broker_url_set
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from trainer.models import Training
from trainer.services import trainings

pytestmark = pytest.mark.django_db

DEAD_REDIS = "redis://127.0.0.1:1/0"


@pytest.fixture
def redis_down(settings, monkeypatch) -> Iterator[None]:
    """The cache and the Celery broker both at a closed port (they share REDIS_URL in production)."""
    settings.CACHES = {
        "default": {**settings.CACHES["default"], "LOCATION": DEAD_REDIS},
    }
    # Throttled as in production (low enough that counting is needed), so the throttle does use the cache.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "60/min", "user": "6000/min"})
    previous = celery_app.conf.broker_url
    broker_url_set(DEAD_REDIS)
    try:
        yield
    finally:
        broker_url_set(previous)
        caches["default"].close()


def test_redis_down_cache_read_misses(redis_down):
    backend = caches["default"]

    assert backend.get("anything", "missing") == "missing"


def test_redis_down_api_rating_saved(api_data, caller, trainer, redis_down):
    response = caller("trainer_token").post(
        "/api/collections/tiny/ratings/", {"question_id": "q1", "answer_id": "a1", "stars": 1}, format="json"
    )

    assert response.status_code == 201
    assert response.json()["ratings"] == [
        {"question_id": "q1", "answer_id": "a1", "stars": 1, "note": "", "label": 2, "rater_count": 2}
    ]
    assert Rating.objects.get(rater=trainer, question__external_id="q1", answer__external_id="a1").stars == 1


def test_redis_down_api_read_answers_200(api_data, caller, redis_down):
    response = caller("rater_token").get("/api/collections/tiny/")

    assert response.status_code == 200
    assert response.json()["slug"] == "tiny"


@pytest.mark.parametrize("page", ["/", "/c/tiny/rate/", "/c/tiny/progress/"])
def test_redis_down_rater_and_trainer_pages_200(api_data, trainer, redis_down, page):
    client = Client()
    client.force_login(trainer)

    response = client.get(page, follow=True)

    assert response.status_code == 200


def test_redis_down_rating_page_saves_a_rating(api_data, rater, redis_down):
    client = Client()
    client.force_login(rater)
    question = api_data.collection.questions.get(external_id="q2")
    answer = api_data.collection.answers.get(external_id="a3")

    page = client.get(f"/c/tiny/rate/{question.pk}/")
    saved = client.post(
        f"/c/tiny/rate/{question.pk}/answers/{answer.pk}/", {"stars": "2"}, HTTP_HX_REQUEST="true"
    )

    assert (page.status_code, saved.status_code) == (200, 200)
    assert Rating.objects.get(rater=rater, question=question, answer=answer).stars == 2


def test_redis_down_api_evaluation_start_503_nothing_stored(api_data, caller, redis_down):
    before = EvaluationRun.objects.count()

    response = caller("trainer_token").post(
        f"/api/rankers/{api_data.builtin.pk}/evaluations/", {}, format="json"
    )

    assert response.status_code == 503
    assert "task queue (Redis) is not reachable" in response.json()["detail"]
    assert EvaluationRun.objects.count() == before


def test_redis_down_api_training_start_503_nothing_stored(api_data, caller, redis_down, monkeypatch):
    monkeypatch.setattr(trainings, "training_readiness", lambda ranker: type("R", (), {"ready": True})())
    before = Training.objects.count()

    response = caller("trainer_token").post(f"/api/rankers/{api_data.builtin.pk}/train/", {}, format="json")

    assert response.status_code == 503
    assert Training.objects.count() == before


def test_redis_down_healthz_reports_broker_down(redis_down):
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "degraded", "database": "ok", "broker": "down", "cache": "down"}


def test_redis_up_healthz_ok(db):
    response = Client().get("/healthz")

    assert response.status_code == 200
    assert response.json() == {"status": "ok", "database": "ok", "broker": "ok", "cache": "ok"}


def test_redis_down_invalid_token_is_401(redis_down, collection):
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")

    response = client.get("/api/collections/")

    assert (response.status_code, response.json()) == (401, {"detail": "Invalid or revoked token."})
