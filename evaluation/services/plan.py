"""Planning a run: claimed PENDING → RUNNING (``jobs.job_claim``) and its test questions split into chunks
of ``EVALUATION_CHUNK_SIZE``, one ``evaluation.chunk`` task each.
"""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from corpus.selectors import test_questions
from evaluation.models import ChunkStatus, EvaluationChunk, EvaluationRun, RunStatus
from jobs import job_claim


@transaction.atomic
def run_plan(*, run_id: int, worker: str) -> list[int]:
    """Claim a PENDING run, split its test questions into chunks and return the chunk ids to queue.

    Claim and plan commit together, so a planner killed half-way leaves the run PENDING for a retry.
    Returns [] when the run was already claimed (a redelivered message) or has nothing to do.
    """
    if not job_claim(EvaluationRun, pk=run_id, worker=worker, queued=RunStatus.PENDING):
        return []
    return chunks_create(run_id=run_id)


@transaction.atomic
def chunks_create(*, run_id: int) -> list[int]:
    run = EvaluationRun.objects.select_for_update().select_related("collection").get(pk=run_id)
    if run.status != RunStatus.RUNNING:
        return []
    if run.chunks_total:
        # Planned before (the planner died before queuing the chunks): queue the unfinished ones again.
        return list(run.chunks.exclude(status=ChunkStatus.DONE).values_list("pk", flat=True))
    question_ids = list(test_questions(collection=run.collection).values_list("pk", flat=True))
    if not question_ids:
        run.status, run.finished_at = RunStatus.FAILED, timezone.now()
        run.error = (
            "This collection has no test questions, so there is nothing to evaluate. "
            "Import questions with split “test”, or set a test fraction and re-import."
        )
        run.save(update_fields=["status", "finished_at", "error"])
        return []
    size = settings.EVALUATION_CHUNK_SIZE
    now = timezone.now()
    # A queued chunk's heartbeat is when it was queued: if no worker claims it within the stale limit
    # (its message was lost with a killed worker's prefetch), the sweep queues it again.
    chunks = EvaluationChunk.objects.bulk_create(
        [
            EvaluationChunk(
                run=run, index=i, question_ids=question_ids[start : start + size], heartbeat_at=now
            )
            for i, start in enumerate(range(0, len(question_ids), size))
        ]
    )
    run.questions_total, run.chunks_total = len(question_ids), len(chunks)
    run.save(update_fields=["questions_total", "chunks_total"])
    return [chunk.pk for chunk in chunks]
