"""`manage.py train_ranker`: queues a training, --wait follows it to the decision; refusals are one line."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from corpus.services import collection_create
from rankers.services import ranker_create
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import learnable_collection
from trainer.models import Training


@pytest.mark.django_db
def test_train_ranker_too_few_labels_says_how_many_more():
    collection = collection_create(name="C", slug="c")
    ranker_create(collection=collection, name="Built-in", kind="builtin", is_default=True)

    with pytest.raises(
        CommandError, match=r"there are 0\. Rate 10 more training questions: /c/c/rate/\?split=train"
    ):
        call_command("train_ranker", "--collection", "c")


@pytest.mark.django_db
def test_train_ranker_unknown_collection_is_one_line():
    with pytest.raises(CommandError, match="no collection 'nope'"):
        call_command("train_ranker", "--collection", "nope")


@pytest.mark.django_db
def test_train_ranker_http_ranker_without_labels_is_refused_for_too_few():
    # An http ranker trains a reranker of its service's answers, on the same readiness rule.
    collection = collection_create(name="C", slug="c")
    ranker = ranker_create(collection=collection, name="S", kind="http", config={"url": "http://r.test/"})

    with pytest.raises(CommandError, match="^Training needs at least 10 training questions"):
        call_command("train_ranker", "--collection", "c", "--ranker", str(ranker.pk))


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_train_ranker_wait_reports_the_decision(model_dir, celery_worker_process, capsys):
    data = learnable_collection()
    ranker_create(collection=data.collection, name="Built-in", kind="builtin", is_default=True)

    call_command("train_ranker", "--collection", "learnable", "--wait")

    out = capsys.readouterr().out
    training = Training.objects.get()
    assert out.startswith(f"Training {training.pk} of Built-in queued.\n")
    assert (
        f"v2 ({training.version.method}): promoted. v2 vs v1 on 10 test questions: NDCG@10 on rated answers 1.000 vs"
        in out
    )
