"""Evaluation runs: start one, plan it into chunks, evaluate a chunk, finalise the run.

How a run moves (every step is a conditional UPDATE, so a redelivered or duplicated Celery message
never does anything twice):

1. ``evaluation_start`` snapshots the collection's metric definition onto a PENDING run and, after
   commit, queues ``evaluation.run``. When the broker is unreachable it raises ``EvaluationUnavailable``
   *before* creating anything; if the broker dies between that check and the publish, the run is
   marked FAILED with the reason (never left PENDING for ever).
2. ``run_plan`` (task ``evaluation.run``) claims PENDING→RUNNING, splits the test questions into chunks
   of ``EVALUATION_CHUNK_SIZE`` and queues one ``evaluation.chunk`` task per chunk, so more workers
   finish sooner. No chord: the embedded broker has no result backend. Instead each chunk counts
   itself done with an atomic UPDATE, and whoever completes the last chunk finalises the run.
3. ``chunk_evaluate`` claims its chunk, skips questions that already have a result (a resumed chunk),
   asks the ranker once per question (an http ranker retries transient errors itself: one retry layer)
   with at most ``EVALUATION_CONCURRENCY`` requests in flight per worker process (shared by the chunks a
   worker evaluates at once), beats on the chunk on a timer, and stores per-question results in batches.
4. ``run_finalise`` computes the run's means from all its question results with the metrics engine,
   the bootstrap CI, and the paired comparison with the previous successful run of the ranker.

A worker killed mid-run: its chunk stays RUNNING. When a worker with the same node name starts again,
``evaluations_resume`` hands that chunk back (its heartbeat predates the new process); any worker takes
over a chunk whose heartbeat is older than ``EVALUATION_STALE_SECONDS`` (every worker's watchdog looks
every half of that, beat's sweep every minute), so the stall is bounded with or without beat.
The unique (run, question) constraint and the skip of answered questions mean no duplicate rows.
"""

from __future__ import annotations

import json
import logging
import math
import queue
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import Any, cast

import numpy as np
from celery import current_app
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction
from django.db.models import F, Q
from django.db.models.functions import Least
from django.utils import timezone

from corpus.models import Collection, Question
from corpus.selectors import test_questions
from evaluation.broker import BrokerUnreachable, broker_check
from evaluation.heartbeat import heartbeat
from evaluation.metrics.ranking import Discount, Gain, RankingEvaluation, evaluate_rankings
from evaluation.metrics.stats import bootstrap_ci, compare_runs
from evaluation.models import (
    ChunkStatus,
    EvaluationChunk,
    EvaluationRun,
    QuestionResult,
    RunStatus,
    RunTrigger,
)
from evaluation.numbers import percent
from rankers.backends import get_backend
from rankers.base import RankerError, RankerUnavailable, Ranking, RankQuery
from rankers.models import Ranker, RankerVersion
from rankers.selectors import default_ranker, ranking_version
from ratings.models import Label
from ratings.selectors import labels_by_question

logger = logging.getLogger(__name__)

# A run where more than this share of test questions could not be ranked is FAILED, not averaged.
FAILURE_LIMIT = 0.05
# Fixed seeds: the same results always give the same CI and p-value (a resumed run equals a clean one).
STATS_SEED = 0
# Results are written (and progress shown) at least this often while a chunk runs.
BATCH_SECONDS = 0.5
BATCH_SIZE = 100


class EvaluationUnavailable(Exception):
    """The evaluation cannot be queued (the Celery broker is unreachable). The API answers 503."""


# ----------------------------------------------------------------------------------------- start


def _broker_check() -> None:
    """Raise EvaluationUnavailable unless a connection to the broker can be opened now."""
    try:
        broker_check()
    except BrokerUnreachable as exc:
        raise EvaluationUnavailable(_unavailable_message(str(exc))) from exc


def _unavailable_message(reason: str) -> str:
    return (
        f"The evaluation could not be queued: the task queue (Redis) is not reachable ({reason}). "
        "Ratings still save; start the evaluation again when it is back."
    )


def _enqueue_run(run_id: int) -> None:
    """Publish the run's task (after commit). On failure mark the run FAILED with the reason, then raise."""
    try:
        current_app.send_task("evaluation.run", kwargs={"run_id": run_id})
    except Exception as exc:
        message = _unavailable_message(f"{exc.__class__.__name__}: {exc}")
        EvaluationRun.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
            status=RunStatus.FAILED, error=message, finished_at=timezone.now()
        )
        raise EvaluationUnavailable(message) from exc


def evaluation_start(
    *,
    ranker: Ranker,
    ranker_version: RankerVersion | None = None,
    trigger: str,
    created_by: AbstractBaseUser | None = None,
) -> EvaluationRun:
    """Queue an evaluation of the ranker (at the given version, default its latest) on every test question.

    The collection's metric definition is copied onto the run, so later settings changes never rewrite
    history. If a run of the same ranker and version is already pending or running, that run is
    returned instead of starting a second one (a double click, or an API retry).

    Raises EvaluationUnavailable when the broker is unreachable; nothing is stored then.
    """
    if trigger not in RunTrigger.values:
        raise ValueError(f"trigger must be one of {', '.join(RunTrigger.values)}, not {trigger!r}")
    if ranker_version is not None and ranker_version.ranker_id != ranker.pk:
        raise ValueError(f"version {ranker_version.label!r} belongs to another ranker than {ranker.name!r}")
    if ranker_version is None:
        # What the backend would use (its champion, else its latest version), recorded so the history says which one ran.
        ranker_version = ranking_version(ranker=ranker)
    _broker_check()
    with transaction.atomic():
        # Serialise starts of one ranker so two clicks cannot both create a run.
        Ranker.objects.select_for_update().filter(pk=ranker.pk).first()
        active = (
            EvaluationRun.objects.filter(
                ranker=ranker,
                ranker_version=ranker_version,
                status__in=[RunStatus.PENDING, RunStatus.RUNNING],
            )
            .order_by("-created_at", "-id")
            .first()
        )
        if active is not None:
            return active
        collection: Collection = ranker.collection
        run = EvaluationRun.objects.create(
            ranker=ranker,
            ranker_version=ranker_version,
            collection=collection,
            trigger=trigger,
            created_by=cast(Any, created_by)
            if created_by is not None and created_by.is_authenticated
            else None,
            ndcg_k=collection.ndcg_k,
            gain_scheme=collection.gain_scheme,
            discount=collection.discount,
            relevance_threshold=collection.relevance_threshold,
            accuracy_k=collection.accuracy_k,
        )
        transaction.on_commit(partial(_enqueue_run, run.pk))
    return run


# ----------------------------------------------------------------------------------------- plan


@transaction.atomic
def run_plan(*, run_id: int, worker: str) -> list[int]:
    """Claim a PENDING run, split its test questions into chunks and return the chunk ids to queue.

    Claim and plan commit together, so a planner killed half-way leaves the run PENDING for a retry.
    Returns [] when the run was already claimed (a redelivered message) or has nothing to do.
    """
    claimed = EvaluationRun.objects.filter(pk=run_id, status=RunStatus.PENDING).update(
        status=RunStatus.RUNNING, started_at=timezone.now(), claimed_by=worker
    )
    if not claimed:
        return []
    return _chunks_create(run_id=run_id)


@transaction.atomic
def _chunks_create(*, run_id: int) -> list[int]:
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


# ----------------------------------------------------------------------------------------- chunk


def _chunk_claim(*, chunk_id: int, worker: str, token: str) -> bool:
    stale = timezone.now() - timedelta(seconds=settings.EVALUATION_STALE_SECONDS)
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


def failure_allowance(total: int) -> int:
    """How many questions may fail before the run counts as FAILED (more than 5% fails it)."""
    return math.floor(total * FAILURE_LIMIT)


_in_flight_limit: tuple[int, threading.BoundedSemaphore] | None = None


def _in_flight() -> threading.BoundedSemaphore:
    """The worker process's bound on ranker requests in flight (EVALUATION_CONCURRENCY), shared by all the
    chunks it evaluates at once, so one chunk's tail and database writes overlap the next chunk's requests."""
    global _in_flight_limit
    size = settings.EVALUATION_CONCURRENCY
    with _backends_lock:
        if _in_flight_limit is None or _in_flight_limit[0] != size:
            _in_flight_limit = (size, threading.BoundedSemaphore(size))
        return _in_flight_limit[1]


@dataclass
class _Outcome:
    question: Question
    ranking: Ranking | None = None
    error: str = ""


def _rank_once(backend, question: Question, depth: int) -> _Outcome:
    """Ask the ranker once; never raises.

    Transient errors are retried in one place only, by the backend itself (an http ranker's ``retries``,
    whose message says how many attempts it made): retrying here too would multiply the attempts.
    """
    query = RankQuery(external_id=question.external_id, text=question.text)
    try:
        with _in_flight():
            ranking = backend.rank(query, depth)
    except RankerUnavailable as exc:
        return _Outcome(question, error=f"Ranker unavailable: {exc}")
    except RankerError as exc:
        return _Outcome(question, error=f"Ranker error: {exc}")
    except Exception as exc:  # a bug in a backend must fail the question, not hang the run
        logger.exception("ranker backend crashed on question %s", question.pk)
        return _Outcome(question, error=f"Ranker crashed: {exc.__class__.__name__}: {exc}")
    ids = ranking.ids[:depth]
    if len(set(ids)) != len(ids):
        return _Outcome(question, error="Ranker error: the ranking lists the same answer more than once")
    return _Outcome(
        question, ranking=Ranking(answers=ranking.answers[:depth], unknown_ids=ranking.unknown_ids)
    )


def score_rankings(
    *, run: EvaluationRun, rankings: Sequence[Sequence[str]], labels: Sequence[dict[str, int]]
) -> RankingEvaluation:
    """Per-question metrics of the rankings under the run's metric definition (the metrics engine)."""
    return evaluate_rankings(
        [list(r) for r in rankings],
        list(labels),
        k=run.ndcg_k,
        accuracy_k=run.accuracy_k,
        threshold=run.relevance_threshold,
        gain=cast(Gain, run.gain_scheme),
        discount=cast(Discount, run.discount),
    )


def _ideal(labels: dict[str, int], k: int) -> list[list]:
    """The best possible top k: known relevant answers, highest label first (ties by id)."""
    relevant = sorted(((a, g) for a, g in labels.items() if g > 0), key=lambda item: (-item[1], item[0]))
    return [[a, g] for a, g in relevant[:k]]


def _results_build(run: EvaluationRun, outcomes: list[_Outcome], labels: dict[int, dict[str, int]]):
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


# One backend per ranker, version and config, reused by the chunks a worker evaluates for a while: an HTTP
# backend holds a connection pool (and the collection's answer ids), a builtin one its loaded index.
BACKEND_TTL_SECONDS = 60
_backends: dict[tuple, tuple[float, object]] = {}
_backends_lock = threading.Lock()


def _backend_for(run: EvaluationRun):
    key = (run.ranker_id, run.ranker_version_id, json.dumps(run.ranker.config, sort_keys=True))
    now = time.monotonic()
    with _backends_lock:
        for stale in [k for k, (made, _) in _backends.items() if now - made > BACKEND_TTL_SECONDS]:
            del _backends[stale]
        if key in _backends:
            return _backends[key][1]
    backend = get_backend(run.ranker, run.ranker_version)
    with _backends_lock:
        _backends[key] = (now, backend)
    return backend


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
        with heartbeat(
            lambda: mine.update(heartbeat_at=timezone.now()), stale_seconds=settings.EVALUATION_STALE_SECONDS
        ):
            try:
                backend = _backend_for(run)
            except RankerError as exc:
                # The ranker cannot even be set up (bad config, missing model): every question fails alike.
                outcomes = [_Outcome(q, error=f"Ranker error: {exc}") for q in todo]
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
    done.put(future.result() if exc is None else _Outcome(question, error=f"Ranker crashed: {exc!r}"))


def _chunk_rank(*, run: EvaluationRun, chunk: EvaluationChunk, backend, questions: list[Question]) -> None:
    labels = labels_by_question(question_ids=[q.pk for q in questions])
    depth = max(run.ndcg_k, run.accuracy_k)
    done: queue.SimpleQueue[_Outcome] = queue.SimpleQueue()
    # The ranker calls are I/O-bound for HTTP rankers: keep EVALUATION_CONCURRENCY of them in flight.
    # Database writes stay on this thread, while the pool keeps asking.
    with ThreadPoolExecutor(max_workers=settings.EVALUATION_CONCURRENCY, thread_name_prefix="rank") as pool:
        futures = [pool.submit(_rank_once, backend, q, depth) for q in questions]
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


# ----------------------------------------------------------------------------------------- finalise


def _nan_to_none(value: float) -> float | None:
    return None if value is None or math.isnan(value) else float(value)


def failure_text(*, total: int, attempted: int, failed: int, first_error: str) -> str:
    """Why a run failed, in the order it happened: how many questions were attempted and failed, how
    many were not attempted because the run stopped, the rule, and the first error met."""
    rule = (
        f"a run fails when more than {percent(FAILURE_LIMIT)} of its test questions (here {failure_allowance(total)}) "
        "cannot be ranked, so its score would not be comparable"
    )
    first = f" First error: {first_error}" if first_error else ""
    if attempted < total:
        return (
            f"Stopped after attempting {attempted} of {total} test questions: {failed} could not be ranked and "
            f"{total - attempted} were not attempted because the run stopped ({rule}).{first}"
        )
    return (
        f"{failed} of {total} test questions ({percent(failed / total)}) could not be ranked; {rule}.{first}"
    )


def run_finalise(*, run_id: int) -> bool:
    """Compute the run's results once all chunks are done. Returns True when this call finalised it."""
    with transaction.atomic():
        run = EvaluationRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status != RunStatus.RUNNING or not run.chunks_total:
            return False
        if run.chunks_done < run.chunks_total:
            return False
        _results_aggregate(run)
        return True


def _results_aggregate(run: EvaluationRun) -> None:
    results = list(
        QuestionResult.objects.filter(run=run)
        .order_by("question_id")
        .values(
            "question_id",
            "ndcg",
            "accuracy_hit",
            "judged",
            "unlabelled_in_top_k",
            "error",
            "ranked_answer_ids",
        )
    )
    answered = [r for r in results if not r["error"]]
    run.questions_done = len(results)
    run.questions_failed = len(results) - len(answered)
    if run.questions_failed and not run.first_error:
        run.first_error = next(r["error"] for r in results if r["error"])
    run.label_count = Label.objects.filter(question__collection_id=run.collection_id).count()
    # Not attempted: the run stopped asking once it could no longer succeed (never asked, never counted
    # as failed; they fail the run all the same, as its score would leave them out).
    missing = run.questions_total - len(answered)
    if missing > failure_allowance(run.questions_total) or not answered:
        run.status = RunStatus.FAILED
        run.error = failure_text(
            total=run.questions_total,
            attempted=run.questions_done,
            failed=run.questions_failed,
            first_error=run.first_error,
        )
        run.finished_at = timezone.now()
        run.save()
        return
    ndcg = np.array([np.nan if r["ndcg"] is None else r["ndcg"] for r in answered], dtype=np.float64)
    scored = ~np.isnan(ndcg)
    ci = bootstrap_ci(ndcg, seed=STATS_SEED)
    run.ndcg_mean, run.ndcg_ci_low, run.ndcg_ci_high = (
        _nan_to_none(ci.mean),
        _nan_to_none(ci.low),
        _nan_to_none(ci.high),
    )
    hits = np.array([bool(r["accuracy_hit"]) for r in answered], dtype=np.float64)
    # accuracy@k over the same questions as NDCG (those with a known good answer), so the two compare.
    run.accuracy_mean = float(hits[scored].mean()) if scored.any() else None
    run.judged_mean = float(np.mean([r["judged"] for r in answered]))
    run.unlabelled_in_top_k = sum(r["unlabelled_in_top_k"] for r in answered)
    run.no_good_answer_count = int((~scored).sum())
    run.scored_count = int(scored.sum())
    if run.questions_failed:
        run.error = (
            f"{run.questions_failed} of {run.questions_total} test questions could not be ranked and are "
            f"left out. First error: {run.first_error}"
        )
    _compare_with_previous(run, answered)
    run.status, run.finished_at = RunStatus.SUCCEEDED, timezone.now()
    run.save()


def _compare_with_previous(run: EvaluationRun, answered: Sequence[Any]) -> None:
    """Paired comparison with the previous successful run of the ranker, on the same labels.

    Both runs' stored rankings are scored with the labels known now, so the difference measures the
    rankings, not new ratings (rating more answers alone moves NDCG).
    """
    previous = (
        EvaluationRun.objects.succeeded()
        .filter(ranker_id=run.ranker_id, created_at__lte=run.created_at)
        .exclude(pk=run.pk)
        .order_by("-created_at", "-id")
        .first()
    )
    run.previous_run = previous
    if previous is None:
        return
    before = dict(
        QuestionResult.objects.filter(run=previous, error="").values_list("question_id", "ranked_answer_ids")
    )
    paired = [
        (r["question_id"], r["ranked_answer_ids"], before[r["question_id"]])
        for r in answered
        if r["question_id"] in before
    ]
    if not paired:
        return
    labels = labels_by_question(question_ids=[q for q, _, _ in paired])
    label_list = [labels[q] for q, _, _ in paired]
    now = score_rankings(run=run, rankings=[r for _, r, _ in paired], labels=label_list)
    then = score_rankings(run=run, rankings=[r for _, _, r in paired], labels=label_list)
    comparison = compare_runs(now.ndcg, then.ndcg, seed=STATS_SEED)
    if comparison.n == 0:
        return
    run.delta = comparison.difference
    run.delta_ci_low, run.delta_ci_high = comparison.ci_low, comparison.ci_high
    run.p_value = comparison.p_value
    run.previous_ndcg_mean = comparison.mean_b
    run.comparison_count = comparison.n
    run.verdict = comparison.verdict()


# ----------------------------------------------------------------------------------------- recovery


def evaluations_resume(*, worker: str, since: datetime) -> list[int]:
    """Chunk ids to queue again: chunks whose worker is gone. Called when a worker starts, by every
    worker's watchdog (``evaluation.tasks``, every half stale limit) and by beat's sweep.

    Gone means:

    - a chunk this worker node held before ``since`` (its previous process died mid-chunk);
    - a RUNNING chunk of any worker whose heartbeat is older than ``EVALUATION_STALE_SECONDS`` (a worker
      beats every quarter of that while it holds a chunk, ``evaluation.heartbeat``, so only a dead or
      cut-off worker falls that far behind);
    - a PENDING chunk queued longer ago than that and claimed by nobody (its message went down with a
      killed worker's prefetch);
    - unfinished chunks of runs this worker planned but never queued (it died while planning).

    Each chunk taken over is set PENDING with a fresh heartbeat by one conditional UPDATE, so two
    workers sweeping at once queue it once, and a queued chunk is not queued again for another limit.
    Runs whose chunks are all done but which were never finalised are finalised here.

    The stall this bounds: a worker SIGKILLed mid-chunk leaves it for at most the stale limit plus one
    watchdog interval (30 s + 15 s by default) whenever any worker is running, beat or not.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=settings.EVALUATION_STALE_SECONDS)
    unfinished = EvaluationChunk.objects.filter(run__status=RunStatus.RUNNING).exclude(
        status=ChunkStatus.DONE
    )
    gone = (
        Q(status=ChunkStatus.RUNNING, claimed_by=worker, heartbeat_at__lt=since)
        | Q(heartbeat_at__lt=stale)
        | Q(status=ChunkStatus.PENDING, heartbeat_at__isnull=True, run__started_at__lt=stale)
    )
    ids: set[int] = set()
    for chunk_id in unfinished.filter(gone).values_list("pk", flat=True):
        taken = unfinished.filter(gone, pk=chunk_id).update(
            status=ChunkStatus.PENDING, claim_token="", heartbeat_at=now
        )
        if taken:
            ids.add(chunk_id)
    for run_id in EvaluationRun.objects.filter(
        status=RunStatus.RUNNING, claimed_by=worker, started_at__lt=since
    ).values_list("pk", flat=True):
        ids |= set(_chunks_create(run_id=run_id))
    for run_id in EvaluationRun.objects.filter(
        status=RunStatus.RUNNING, chunks_total__gt=0, chunks_done__gte=F("chunks_total")
    ).values_list("pk", flat=True):
        run_finalise(run_id=run_id)
    return sorted(ids)


def stale_pending_runs() -> list[int]:
    """PENDING runs whose message was lost (queued more than EVALUATION_STALE_SECONDS ago)."""
    stale = timezone.now() - timedelta(seconds=settings.EVALUATION_STALE_SECONDS)
    return list(
        EvaluationRun.objects.filter(status=RunStatus.PENDING, created_at__lt=stale).values_list(
            "pk", flat=True
        )
    )


def scheduled_evaluations_start() -> list[EvaluationRun]:
    """Start an evaluation of every collection's default ranker (Celery beat, EVALUATION_SCHEDULE)."""
    runs = []
    for collection in Collection.objects.order_by("pk"):
        ranker = default_ranker(collection=collection)
        if ranker is None:
            continue
        version = ranking_version(ranker=ranker)
        runs.append(evaluation_start(ranker=ranker, ranker_version=version, trigger=RunTrigger.SCHEDULE))
    return runs


# ------------------------------------------------------------------------- champion vs challenger


SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class VersionComparison:
    """Two versions of one ranker on the same test questions, scored with the same (current) labels.

    ``difference`` is mean NDCG@k(challenger) − mean NDCG@k(champion) over the questions both could be
    scored on (a question without any label has no NDCG and is left out of both). NDCG@k here is
    judged-only (``trec_eval -J``): each ranking is condensed to its rated answers before scoring, so an
    unrated answer is unknown rather than 0 stars and a version trained on the ratings gets no credit
    for merely ranking rated answers first (what the unrated answers could be is the certainty page's
    ``predicted`` figure, kept beside this one). With the percentile
    bootstrap CI of that difference and the paired randomization test's two-sided p-value
    (``evaluation.metrics.stats.compare_runs``). ``verdict``: "better" or "worse" when p < 0.05,
    otherwise "within noise".
    """

    k: int
    questions: int
    challenger_ndcg: float
    champion_ndcg: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    improved: int
    worsened: int
    verdict: str

    def as_json(self) -> dict[str, Any]:
        """The figures for a JSON field: NaN (no question could be scored) becomes null."""

        def number(value: float) -> float | None:
            return None if math.isnan(value) else round(value, 6)

        return {
            "k": self.k,
            "questions": self.questions,
            "challenger_ndcg": number(self.challenger_ndcg),
            "champion_ndcg": number(self.champion_ndcg),
            "difference": number(self.difference),
            "ci_low": number(self.ci_low),
            "ci_high": number(self.ci_high),
            "p_value": number(self.p_value),
            "improved": self.improved,
            "worsened": self.worsened,
            "verdict": self.verdict,
        }


def _per_question_ndcg(
    *, backend, questions: list[Question], labels: list[dict[str, int]], run: EvaluationRun
):
    outcomes = [_rank_once(backend, question, run.ndcg_k) for question in questions]
    failed = [o for o in outcomes if o.ranking is None]
    if failed:
        raise RankerError(
            f"{len(failed)} of {len(outcomes)} test questions could not be ranked: {failed[0].error}"
        )
    rankings = [o.ranking.ids if o.ranking else [] for o in outcomes]
    condensed = [[a for a in r if a in known] for r, known in zip(rankings, labels, strict=True)]
    return np.asarray(score_rankings(run=run, rankings=condensed, labels=labels).ndcg, dtype=float)


def versions_compare(*, challenger: RankerVersion, champion: RankerVersion) -> VersionComparison:
    """Rank every test question with both versions now and score both with today's labels, judged-only.

    Nothing is stored: the training loop keeps the figures on the challenger. Raises RankerError when
    a version cannot rank (e.g. its model file is gone) and ValueError for versions of two rankers.
    """
    if challenger.ranker_id != champion.ranker_id:
        raise ValueError("the two versions belong to different rankers")
    ranker = challenger.ranker
    collection = ranker.collection
    questions = list(test_questions(collection=collection))
    by_question = labels_by_question(question_ids=[q.pk for q in questions])
    labels = [by_question[q.pk] for q in questions]
    # An unsaved run carries the collection's metric definition, exactly as a real run would snapshot it.
    definition = EvaluationRun(
        ndcg_k=collection.ndcg_k,
        gain_scheme=collection.gain_scheme,
        discount=collection.discount,
        relevance_threshold=collection.relevance_threshold,
        accuracy_k=collection.accuracy_k,
    )
    new = _per_question_ndcg(
        backend=get_backend(ranker, challenger), questions=questions, labels=labels, run=definition
    )
    old = _per_question_ndcg(
        backend=get_backend(ranker, champion), questions=questions, labels=labels, run=definition
    )
    result = compare_runs(new, old, n_resamples=5000, n_permutations=5000, seed=0)
    both = ~(np.isnan(new) | np.isnan(old))
    significant = not math.isnan(result.p_value) and result.p_value < SIGNIFICANCE
    verdict = "within noise"
    if significant and result.difference > 0:
        verdict = "better"
    elif significant and result.difference < 0:
        verdict = "worse"
    return VersionComparison(
        k=collection.ndcg_k,
        questions=result.n,
        challenger_ndcg=result.mean_a,
        champion_ndcg=result.mean_b,
        difference=result.difference,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        p_value=result.p_value,
        improved=int(np.sum(new[both] > old[both] + 1e-12)),
        worsened=int(np.sum(new[both] < old[both] - 1e-12)),
        verdict=verdict,
    )
