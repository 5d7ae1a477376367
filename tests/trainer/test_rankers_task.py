"""The `trainer.ranker_train` Celery task, run by a real worker process."""

from __future__ import annotations

import time

import pytest

from evaluation.models import EvaluationRun, RunStatus, RunTrigger
from rankers.models import Ranker, RankerKind, RankerVersion
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import learnable_collection
from trainer.services import ranker_train_start


def wait_for(predicate, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.2)
    return None


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_ranker_train_task_creates_version_then_evaluates_it(model_dir, celery_worker_process):
    data = learnable_collection()
    ranker = Ranker.objects.create(collection=data.collection, name="Built-in", kind=RankerKind.BUILTIN)

    ranker_train_start(ranker=ranker)  # autocommit: queued at once

    version = wait_for(lambda: RankerVersion.objects.filter(ranker=ranker).first())
    assert version is not None, celery_worker_process.log()
    assert (version.label, version.uses_model) == ("v1", True)
    assert (model_dir / version.model_file).exists()  # the worker wrote it under the same MODEL_DIR
    run = wait_for(
        lambda: EvaluationRun.objects.filter(
            ranker=ranker, status__in=[RunStatus.SUCCEEDED, RunStatus.FAILED]
        ).first()
    )
    assert run is not None, celery_worker_process.log()
    assert (run.trigger, run.ranker_version_id, run.status) == (
        RunTrigger.TRAINING,
        version.pk,
        RunStatus.SUCCEEDED,
    )
    # 10 test questions; the model puts each one's relevant answer (3 stars) first.
    assert run.ndcg_mean == pytest.approx(1.0)
