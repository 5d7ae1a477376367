"""Evaluating one chunk of a run's test questions: claimed by one worker (its Celery task id the claim
token, a silent holder's chunk taken over), the ranker asked for the questions without a result, with
a heartbeat on a timer, results stored in batches; the worker that completes the last chunk finalises
the run.
"""

from __future__ import annotations

import math
import queue
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Least
from django.utils import timezone

from corpus.models import Question
from evaluation.models import ChunkStatus, EvaluationChunk, EvaluationRun, QuestionResult, RunStatus
from jobs import failure_reason, heartbeat_rows, stale_since
from rankers.base import RankerError
from ratings.selectors import labels_by_question

from .finalise import failure_allowance, run_finalise
from .ranking import Outcome, backend_for, rank_once
from .scoring import score_rankings

# Results are written (and progress shown) at least this often while a chunk runs.
BATCH_SECONDS = 0.5
BATCH_SIZE = 100


def _chunk_claim(*, chunk_id: int, worker: str, token: str) -> bool:
    stale = stale_since(settings.EVALUATION_STALE_SECONDS)
    claimable = (
        Q(status=ChunkStatus.PENDING)
        | Q(status=ChunkStatus.RUNNING, claim_token=token)
        | Q(status=ChunkStatus.RUNNING, heartbeat_at__lt=stale)
    )
    return bool(
        EvaluationChunk.objects.filter(claimable, pk=chunk_id, run__status=RunStatus.RUNNING).update(
            status=ChunkStatus.RUNNING,
            claimed_by=worker,
            claim_token=token,
            heartbeat_at=timezone.now(),
            attempts=F("attempts") + 1,
        )
    )


def _ideal(labels: dict[str, int], k: int) -> list[list]:
    """The best possible top k: known relevant answers, highest label first (ties by id)."""
    relevant = sorted(((a, g) for a, g in labels.items() if g > 0), key=lambda item: (-item[1], item[0]))
    return [[a, g] for a, g in relevant[:k]]


def _results_build(run: EvaluationRun, outcomes: list[Outcome], labels: dict[int, dict[str, int]]):
    rows: list[QuestionResult] = []
    ranked = [(o, o.ranking) for o in outcomes if o.ranking is not None]
    if ranked:
        evaluation = score_rankings(
            run=run,
            rankings=[r.ids for _, r in ranked],
            labels=[labels.get(o.question.pk, {}) for o, _ in ranked],
        )
        for i, (outcome, ranking) in enumerate(ranked):
            known = labels.get(outcome.question.pk, {})
            ids = ranking.ids
            ndcg = float(evaluation.ndcg[i])
            rows.append(
                QuestionResult(
                    run=run,
                    question=outcome.question,
                    ranked_answer_ids=ids,
                    labels=[known.get(a) for a in ids],
                    dcg=float(evaluation.dcg[i]),
                    ideal_dcg=float(evaluation.ideal_dcg[i]),
                    ndcg=None if math.isnan(ndcg) else ndcg,
                    accuracy_hit=bool(evaluation.success[i]),
                    unlabelled_in_top_k=int(evaluation.unlabelled_in_top_k[i]),
                    judged=float(evaluation.judged[i]),
                    unknown_answer_ids=list(ranking.unknown_ids),
                    ideal=_ideal(known, run.ndcg_k),
                )
            )
    for outcome in outcomes:
        if outcome.ranking is None:
            rows.append(QuestionResult(run=run, question=outcome.question, error=outcome.error[:2000]))
    return rows


def _progress_write(*, run_id: int, chunk_id: int, rows: list[QuestionResult]) -> None:
    """Store a batch of results and advance the run's progress and the chunk's heartbeat.

    The counters are incremented (no COUNT over the run's results per batch); a duplicate delivery that
    re-inserts rows could overcount, so they are capped at the total and set exactly at finalisation.
    """
    errors = [row.error for row in rows if row.error]
    with transaction.atomic():
        QuestionResult.objects.bulk_create(rows, ignore_conflicts=True)
        EvaluationRun.objects.filter(pk=run_id).update(
            questions_done=Least(F("questions_done") + len(rows), F("questions_total")),
            questions_failed=Least(F("questions_failed") + len(errors), F("questions_total")),
        )
        if errors:
            EvaluationRun.objects.filter(pk=run_id, first_error="").update(first_error=errors[0])
        EvaluationChunk.objects.filter(pk=chunk_id).update(heartbeat_at=timezone.now())


def _too_many_failures(run_id: int) -> bool:
    run = (
        EvaluationRun.objects.filter(pk=run_id)
        .values("status", "questions_failed", "questions_total")
        .first()
    )
    if run is None or run["status"] != RunStatus.RUNNING:
        return True
    return run["questions_failed"] > failure_allowance(run["questions_total"])


def chunk_evaluate(*, chunk_id: int, worker: str, token: str) -> None:
    """Evaluate one chunk of a run's questions (idempotent), then finalise the run if it was the last."""
    if not _chunk_claim(chunk_id=chunk_id, worker=worker, token=token):
        # Done, held by a live worker, or the run is over: still make sure a finished run is finalised.
        run_id = EvaluationChunk.objects.filter(pk=chunk_id).values_list("run_id", flat=True).first()
        if run_id is not None:
            run_finalise(run_id=run_id)
        return
    chunk = EvaluationChunk.objects.select_related("run__ranker__collection", "run__ranker_version").get(
        pk=chunk_id
    )
    run = chunk.run
    done = set(
        QuestionResult.objects.filter(run=run, question_id__in=chunk.question_ids).values_list(
            "question_id", flat=True
        )
    )
    todo = list(Question.objects.filter(pk__in=set(chunk.question_ids) - done).order_by("pk"))
    if todo and not _too_many_failures(run.pk):
        mine = EvaluationChunk.objects.filter(pk=chunk.pk, status=ChunkStatus.RUNNING, claim_token=token)
        with heartbeat_rows(mine, stale_seconds=settings.EVALUATION_STALE_SECONDS):
            try:
                backend = backend_for(run)
            except RankerError as exc:
                # The ranker cannot even be set up (bad config, missing model): every question fails alike.
                outcomes = [Outcome(q, error=f"Ranker error: {exc}") for q in todo]
                _progress_write(run_id=run.pk, chunk_id=chunk.pk, rows=_results_build(run, outcomes, {}))
            else:
                _chunk_rank(run=run, chunk=chunk, backend=backend, questions=todo)
    with transaction.atomic():
        finished = EvaluationChunk.objects.filter(
            pk=chunk.pk, status=ChunkStatus.RUNNING, claim_token=token
        ).update(status=ChunkStatus.DONE, finished_at=timezone.now())
        if finished:
            EvaluationRun.objects.filter(pk=run.pk).update(chunks_done=F("chunks_done") + 1)
    run_finalise(run_id=run.pk)


def _deliver(done: queue.SimpleQueue, question: Question, future) -> None:
    """Hand a finished ranking to the chunk's thread (every future delivers exactly once unless cancelled)."""
    if future.cancelled():
        return
    exc = future.exception()
    done.put(
        future.result() if exc is None else Outcome(question, error=f"Ranker crashed: {failure_reason(exc)}")
    )


def _chunk_rank(*, run: EvaluationRun, chunk: EvaluationChunk, backend, questions: list[Question]) -> None:
    labels = labels_by_question(question_ids=[q.pk for q in questions])
    depth = max(run.ndcg_k, run.accuracy_k)
    done: queue.SimpleQueue[Outcome] = queue.SimpleQueue()
    # The ranker calls are I/O-bound for HTTP rankers: keep EVALUATION_CONCURRENCY of them in flight.
    # Database writes stay on this thread, while the pool keeps asking.
    with ThreadPoolExecutor(max_workers=settings.EVALUATION_CONCURRENCY, thread_name_prefix="rank") as pool:
        futures = [pool.submit(rank_once, backend, q, depth) for q in questions]
        for question, future in zip(questions, futures, strict=True):
            future.add_done_callback(partial(_deliver, done, question))
        remaining, pending, last_write = len(futures), [], time.monotonic()
        while remaining:
            try:
                pending.append(done.get(timeout=BATCH_SECONDS))
                remaining -= 1
            except queue.Empty:
                pass
            if pending and (
                len(pending) >= BATCH_SIZE or not remaining or time.monotonic() - last_write >= BATCH_SECONDS
            ):
                _progress_write(run_id=run.pk, chunk_id=chunk.pk, rows=_results_build(run, pending, labels))
                pending, last_write = [], time.monotonic()
                if remaining and _too_many_failures(run.pk):
                    # The run will fail anyway: stop asking a ranker that is down, keep what was answered.
                    cancelled = sum(future.cancel() for future in futures)
                    remaining -= cancelled
                    while remaining:
                        pending.append(done.get())
                        remaining -= 1
                    if pending:
                        _progress_write(
                            run_id=run.pk, chunk_id=chunk.pk, rows=_results_build(run, pending, labels)
                        )
                    return
