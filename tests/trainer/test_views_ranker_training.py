"""The training progress block that htmx polls every second: running, finished, failed, nothing yet."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from django.urls import reverse

from tests.trainer.rankers_views_support import *  # noqa: F403 - fixtures
from tests.trainer.rankers_views_support import assert_authz
from trainer.models import Training, TrainingPhase, TrainingStatus

STARTED = datetime(2026, 11, 23, 12, 7, tzinfo=UTC)


def _url(rankers) -> str:
    return reverse("ranker-training", args=[rankers.collection.slug, rankers.ranker.pk])


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_ranker_training_authz(client, rankers, rater, outsider, trainer):
    assert _url(rankers) == f"/c/tiny/rankers/{rankers.ranker.pk}/training/"
    assert_authz(
        client, method="get", url=_url(rankers), rater=rater, outsider=outsider, trainer=trainer, ok=200
    )


def test_ranker_training_post_is_405(client, rankers, trainer):
    client.force_login(trainer)
    assert client.post(_url(rankers)).status_code == 405


def test_ranker_training_running_returns_polling_partial(client, rankers, trainer):
    Training.objects.create(
        ranker=rankers.ranker,
        status=TrainingStatus.RUNNING,
        phase=TrainingPhase.FIT,
        progress=0.756,
        started_at=STARTED,
    )
    client.force_login(trainer)

    response = client.get(_url(rankers) + "?reload=1", headers={"HX-Request": "true"})

    body = response.content.decode()
    assert response.status_code == 200
    assert "HX-Refresh" not in response
    assert body.lstrip().startswith(f'<div id="training-{rankers.ranker.pk}" class="training status-running"')
    assert "<html" not in body
    assert f'hx-get="/c/tiny/rankers/{rankers.ranker.pk}/training/?reload=1"' in body
    assert 'hx-trigger="every 1s" hx-swap="outerHTML"' in body
    assert (
        _text(body)
        == "Running : Fitting the chosen model · since 12:07 76% 76% Refresh to see how far it got."
    )
    assert '<progress max="100" value="76" aria-label="Training progress">' in body


def test_ranker_training_queued_says_waiting_for_a_worker(client, rankers, trainer):
    training = Training.objects.create(ranker=rankers.ranker)
    Training.objects.filter(pk=training.pk).update(created_at=STARTED)
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    assert _text(body).startswith("Queued : Waiting for a worker · since 12:07 0%")
    assert 'hx-trigger="every 1s"' in body


def test_ranker_training_finished_stops_polling_and_says_decision(client, rankers, trainer):
    Training.objects.create(
        ranker=rankers.ranker,
        status=TrainingStatus.SUCCEEDED,
        phase=TrainingPhase.DONE,
        progress=1.0,
        version=rankers.v2,
        decision="promoted",
        decision_reason="v2 vs v1 on 45 test questions: better.",
        started_at=STARTED,
        finished_at=STARTED.replace(minute=9),
    )
    client.force_login(trainer)

    response = client.get(_url(rankers))

    body = response.content.decode()
    assert "hx-get" not in body and "hx-trigger" not in body
    assert _text(body) == (
        "Last training, finished 2026-11-23 12:09: Promoted v2: v2 vs v1 on 45 test questions: better. Show v2"
    )
    assert f'href="/c/tiny/rankers/{rankers.ranker.pk}/versions/{rankers.v2.pk}/"' in body


def test_ranker_training_finished_while_polled_reloads_the_page(client, rankers, trainer):
    Training.objects.create(
        ranker=rankers.ranker, status=TrainingStatus.SUCCEEDED, version=rankers.v2, decision="kept"
    )
    client.force_login(trainer)

    response = client.get(_url(rankers) + "?reload=1", headers={"HX-Request": "true"})

    assert response["HX-Refresh"] == "true"


def test_ranker_training_failed_says_why(client, rankers, trainer):
    Training.objects.create(
        ranker=rankers.ranker,
        status=TrainingStatus.FAILED,
        error="OSError: disk full",
        finished_at=STARTED,
    )
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    assert _text(body) == "Last training, finished 2026-11-23 12:07: Training failed: OSError: disk full"


def test_ranker_training_none_yet_is_an_empty_block(client, rankers, trainer):
    client.force_login(trainer)

    body = client.get(_url(rankers)).content.decode()

    assert _text(body) == ""
    assert f'id="training-{rankers.ranker.pk}"' in body
