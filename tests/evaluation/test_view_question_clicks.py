"""A run's question page shows trainers what production users clicked on the question's answers, beside
the labels, behind a disclosure."""

from __future__ import annotations

import datetime as dt
import uuid

import pytest
from django.test import Client
from django.urls import reverse

from corpus.models import Question
from evaluation.models import RunStatus
from tests.evaluation.conftest import http_ranker
from tests.evaluation.helpers import evaluate_inline
from tests.evaluation.test_services import RANKINGS
from ubi.models import UbiEvent, UbiQuery

DAY = dt.datetime(2026, 11, 28, 10, 0, tzinfo=dt.UTC)


@pytest.fixture
def run(small, fake_ranker_server):
    ranker = http_ranker(small, fake_ranker_server(rankings=RANKINGS).url, name="Service")
    run = evaluate_inline(ranker)
    assert run.status == RunStatus.SUCCEEDED
    return run


def _log(application: str) -> None:
    """q1's text asked once: a3 shown at 1, a1 at 2 and clicked. CTR: rank 1 0/1, rank 2 1/1, so
    a1's COEC = 1 / (1.0 · 1) = 1 (2 stars) and a3's 0 (0 stars)."""
    UbiQuery.objects.create(
        query_id="clicks-1", application=application, user_query="Boundary layer  FLAT plate", timestamp=DAY
    )
    for action, ordinal, object_id in [("impression", 1, "a3"), ("impression", 2, "a1"), ("click", 2, "a1")]:
        UbiEvent.objects.create(
            event_id=uuid.uuid4(),
            application=application,
            action_name=action,
            query_id="clicks-1",
            timestamp=DAY,
            ordinal=ordinal,
            object_id=object_id,
        )


def _page(run, user):
    client = Client()
    client.force_login(user)
    question = Question.objects.get(collection=run.collection, external_id="q1")
    return client.get(reverse("evaluation:question", args=[run.pk, question.pk]))


def test_question_page_shows_clicks_beside_labels(run, trainer):
    _log("tiny")

    response = _page(run, trainer)

    rows = [
        (r.judgment.answer_external_id, r.label, r.judgment.clicks, r.judgment.coec, r.judgment.coec_stars)
        for r in response.context["clicks"]
    ]
    assert rows == [("a1", 3, 1, 1.0, 2), ("a3", 1, 0, 0.0, 0)]
    body = response.content.decode()
    assert "What production users did with 2 of this question's answers" in body
    assert reverse("judges-clicks", args=["tiny"]) in body


def test_question_page_without_clicks_says_so(run, trainer):
    _log("another-application")

    response = _page(run, trainer)

    assert response.context["clicks"] == []
    assert "No logged query with this question's text" in response.content.decode()
