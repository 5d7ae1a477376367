"""Finalising a run once all its chunks are done: its means with the bootstrap CI (or FAILED, saying why,
when more than ``FAILURE_LIMIT`` of its questions could not be ranked), and the paired comparison with
the ranker's previous successful run on today's labels.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.db import transaction
from django.utils import timezone

from evaluation.metrics.stats import bootstrap_ci, compare_runs
from evaluation.models import EvaluationRun, QuestionResult, RunStatus
from evaluation.numbers import percent
from ratings.models import Label
from ratings.selectors import labels_by_question

from .scoring import score_rankings

# A run where more than this share of test questions could not be ranked is FAILED, not averaged.
FAILURE_LIMIT = 0.05
# Fixed seeds: the same results always give the same CI and p-value (a resumed run equals a clean one).
STATS_SEED = 0


def failure_allowance(total: int) -> int:
    """How many questions may fail before the run counts as FAILED (more than 5% fails it)."""
    return math.floor(total * FAILURE_LIMIT)


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
    rankings, not new ratings (rating more answers alone moves NDCG); and as NDCG@k on rated answers
    (``evaluation.measures.NDCG_RATED``), the measure of every comparison of two rankings, so the newer
    run is not marked down for answers nobody has rated yet.
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
    now = score_rankings(run=run, rankings=[r for _, r, _ in paired], labels=label_list, rated_only=True)
    then = score_rankings(run=run, rankings=[r for _, _, r in paired], labels=label_list, rated_only=True)
    comparison = compare_runs(now.ndcg, then.ndcg, seed=STATS_SEED)
    if comparison.n == 0:
        return
    run.delta = comparison.difference
    run.delta_ci_low, run.delta_ci_high = comparison.ci_low, comparison.ci_high
    run.p_value = comparison.p_value
    run.previous_ndcg_mean = comparison.mean_b
    run.comparison_count = comparison.n
    run.verdict = comparison.verdict()
