"""Running an evaluation in the test process: the same services the Celery tasks call, one after another."""

from __future__ import annotations

from evaluation import services
from evaluation.models import EvaluationRun, RunTrigger
from rankers.models import Ranker


def run_inline(run: EvaluationRun, *, worker: str = "inline@test") -> EvaluationRun:
    chunk_ids = services.run_plan(run_id=run.pk, worker=worker)
    for chunk_id in chunk_ids:
        services.chunk_evaluate(chunk_id=chunk_id, worker=worker, token=f"token-{chunk_id}")
    run.refresh_from_db()
    return run


def evaluate_inline(ranker: Ranker, **kwargs) -> EvaluationRun:
    """Start a run and execute it here. In a (non-transactional) test nothing commits, so nothing is
    published: the run stays PENDING for this process to run."""
    kwargs.setdefault("trigger", RunTrigger.UI)
    return run_inline(services.evaluation_start(ranker=ranker, **kwargs))
