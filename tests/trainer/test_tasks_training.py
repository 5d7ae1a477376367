"""The `trainer.training_run` Celery task, run by a real worker process."""

from __future__ import annotations

import time

import pytest

from evaluation.models import EvaluationRun, RunStatus, RunTrigger
from rankers.services import ranker_create
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import learnable_collection
from trainer.models import Training, TrainingStatus
from trainer.services import training_start


def wait_for(predicate, timeout: float = 90):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.05)
    return None


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_training_run_task_trains_promotes_then_evaluates_the_new_champion(model_dir, celery_worker_process):
    data = learnable_collection()
    ranker = ranker_create(collection=data.collection, name="Built-in", kind="builtin")

    training = training_start(ranker=ranker)  # autocommit: queued at once

    finished = wait_for(
        lambda: Training.objects.filter(
            pk=training.pk, status__in=[TrainingStatus.SUCCEEDED, TrainingStatus.FAILED]
        ).first()
    )
    assert finished is not None, celery_worker_process.log()
    assert (finished.status, finished.decision, finished.progress) == (
        TrainingStatus.SUCCEEDED,
        "promoted",
        1.0,
    )
    version = finished.version
    assert (version.label, version.uses_model) == ("v2", True)
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
