"""The Train new version button: who may press it, the training it starts, and refusals in plain words."""

from __future__ import annotations

import pytest
from django.urls import reverse

from config.celery import app as celery_app
from corpus.models import Role
from rankers.services import ranker_create
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures (model_dir)
from tests.rankers.rankers_support import learnable_collection
from tests.trainer.rankers_views_support import *  # noqa: F403 - fixtures
from tests.trainer.rankers_views_support import assert_authz
from trainer.models import Training, TrainingPhase, TrainingStatus


@pytest.fixture
def learnable(db, model_dir, make_user):
    """The learnable collection (30 labelled training questions), its builtin ranker and a trainer."""
    data = learnable_collection()
    ranker = ranker_create(collection=data.collection, name="Built-in", kind="builtin")
    trainer = make_user("tess", collection=data.collection, role=Role.TRAINER)
    return ranker, trainer


def _url(ranker) -> str:
    return reverse("ranker-train", args=[ranker.collection.slug, ranker.pk])


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_ranker_train_authz(client, rankers, rater, outsider, trainer):
    url = _url(rankers.ranker)
    assert url == f"/c/tiny/rankers/{rankers.ranker.pk}/train/"
    # The trainer's POST is refused for want of labels, and redirects back like every outcome.
    assert_authz(client, method="post", url=url, rater=rater, outsider=outsider, trainer=trainer, ok=303)
    assert Training.objects.count() == 0


def test_ranker_train_get_is_405(client, rankers, trainer):
    client.force_login(trainer)
    assert client.get(_url(rankers.ranker)).status_code == 405


def test_ranker_train_ranker_of_another_collection_is_404(client, rankers, other_collection, outsider):
    client.force_login(outsider)
    url = reverse("ranker-train", args=[other_collection.slug, rankers.ranker.pk])
    assert client.post(url).status_code == 404


def test_ranker_train_starts_a_queued_training_and_redirects_to_the_page(client, learnable):
    ranker, trainer = learnable
    client.force_login(trainer)

    response = client.post(_url(ranker))

    training = Training.objects.get()
    assert (response.status_code, response["Location"]) == (303, "/c/learnable/rankers/")
    assert (
        training.ranker_id,
        training.status,
        training.phase,
        training.trigger,
        training.created_by_id,
    ) == (
        ranker.pk,
        TrainingStatus.QUEUED,
        TrainingPhase.QUEUED,
        "ui",
        trainer.pk,
    )
    page = client.get(response["Location"])
    assert _messages(page) == [
        f"Training of Built-in started (training {training.pk}); its progress shows below."
    ]
    body = page.content.decode()
    assert f'hx-get="/c/learnable/rankers/{ranker.pk}/training/?reload=1"' in body
    assert "Waiting for a worker" in body


def test_ranker_train_too_few_labels_says_so_with_a_link_to_rate(client, rankers, trainer):
    client.force_login(trainer)

    response = client.post(_url(rankers.ranker), follow=True)

    assert _messages(response) == [
        "Training needs at least 10 training questions with a relevant rated answer (1 star or more); "
        'there are 0. <a href="/c/tiny/rate/?split=train">Rate 10 more training questions</a>.'
    ]
    body = response.content.decode()
    assert '<li class="message error">Training needs at least 10' in body
    assert '<a href="/c/tiny/rate/?split=train">Rate 10 more training questions</a>.</li>' in body
    assert Training.objects.count() == 0


def test_ranker_train_while_training_names_the_running_one(client, learnable):
    ranker, trainer = learnable
    running = Training.objects.create(ranker=ranker, status=TrainingStatus.RUNNING)
    client.force_login(trainer)

    response = client.post(_url(ranker), follow=True)

    (message,) = _messages(response)
    assert message.startswith(f"Built-in is already training (training {running.pk}, running since ")
    assert Training.objects.count() == 1


def test_ranker_train_broker_down_says_try_again(client, learnable):
    ranker, trainer = learnable
    client.force_login(trainer)
    previous = celery_app.conf.broker_url
    celery_app.conf.broker_url = "redis://127.0.0.1:1/0"  # nothing listens on port 1
    try:
        response = client.post(_url(ranker), follow=True)
    finally:
        celery_app.conf.broker_url = previous

    assert _messages(response) == ["Training could not start: the task queue is not reachable, try again."]
    assert Training.objects.count() == 0


def test_ranker_train_http_ranker_needs_the_same_training_labels(client, collection, trainer):
    # An http ranker trains a reranker of its service's answers: refused here only for too few labels.
    service = ranker_create(
        collection=collection, name="Service", kind="http", config={"url": "http://r.test/"}
    )
    client.force_login(trainer)

    response = client.post(_url(service), follow=True)

    assert len(_messages(response)) == 1
    assert _messages(response)[0].startswith("Training needs at least 10 training questions")
    assert Training.objects.count() == 0
