"""Reads of runs one at a time: a ranker's runs, one run, the one before it, its results and files."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import F, Q, QuerySet

from corpus.models import Collection
from evaluation.exports import ResultRow
from evaluation.models import EvaluationRun, EvaluationRunQuerySet, QuestionResult
from rankers.models import Ranker


def runs_for_ranker(*, ranker: Ranker) -> EvaluationRunQuerySet:
    """Every run of the ranker, newest first (failed ones included: the user must see them)."""
    return (
        EvaluationRun.objects.filter(ranker=ranker)
        .select_related("ranker", "ranker_version", "collection", "created_by")
        .order_by("-created_at", "-id")
    )


def latest_runs_by_version(*, ranker: Ranker) -> dict[int, EvaluationRun]:
    """Each version's latest successful run (its figures are the headline's: NDCG@k as evaluations store
    it), keyed by version id; versions never evaluated are missing. One query."""
    latest: dict[int, EvaluationRun] = {}
    runs = (
        EvaluationRun.objects.succeeded()
        .filter(ranker=ranker, ranker_version__isnull=False)
        .order_by("ranker_version_id", "-created_at", "-id")
    )
    for run in runs:
        latest.setdefault(run.ranker_version_id, run)  # type: ignore[arg-type]
    return latest


def run_detail(*, run_id: int) -> EvaluationRun | None:
    """One run with its ranker, version, collection and previous run, or None."""
    return (
        EvaluationRun.objects.select_related(
            "ranker", "ranker_version", "collection", "previous_run", "created_by"
        )
        .filter(pk=run_id)
        .first()
    )


def run_in_collection(*, run_id: object, collection: Collection) -> EvaluationRun | None:
    """The run with this id if it belongs to the collection (ids from a query string may be anything)."""
    try:
        pk = int(str(run_id))
    except ValueError:
        return None
    return (
        EvaluationRun.objects.select_related("ranker", "ranker_version")
        .filter(pk=pk, collection=collection)
        .first()
    )


def previous_successful_run(*, run: EvaluationRun) -> EvaluationRun | None:
    """The ranker's last successful run created before this one (the dashboard's "previous run")."""
    return (
        EvaluationRun.objects.succeeded()
        .filter(ranker_id=run.ranker_id)
        .filter(Q(created_at__lt=run.created_at) | Q(created_at=run.created_at, pk__lt=run.pk))
        .select_related("ranker", "ranker_version")
        .order_by("-created_at", "-id")
        .first()
    )


def question_results(*, run: EvaluationRun) -> QuerySet[QuestionResult]:
    """The run's per-question results, worst NDCG first; questions without a defined NDCG come last."""
    return (
        QuestionResult.objects.filter(run=run)
        .select_related("question")
        .order_by(F("ndcg").asc(nulls_last=True), "question_id")
    )


def run_export_rows(*, run: EvaluationRun) -> list[ResultRow]:
    """The run's per-question results for its files (``evaluation.exports``), by question id."""
    return [
        ResultRow(
            question_id=r.question.external_id,
            question=r.question.text,
            split=r.question.split,
            ranked_answer_ids=list(r.ranked_answer_ids),
            labels=list(r.labels),
            ndcg=r.ndcg,
            dcg=r.dcg,
            ideal_dcg=r.ideal_dcg,
            accuracy_hit=r.accuracy_hit,
            judged=r.judged,
            unlabelled_in_top_k=r.unlabelled_in_top_k,
            error=r.error,
        )
        for r in QuestionResult.objects.filter(run=run)
        .select_related("question")
        .order_by("question__external_id", "question_id")
    ]


@dataclass(frozen=True)
class UnknownIds:
    """Answer ids a run's ranker returned that the collection does not have (they count as unlabelled)."""

    questions: int  # questions whose ranking held at least one
    ids: int  # how many in all, repeats across questions included
    examples: list[str]

    def as_json(self) -> dict:
        return {"questions": self.questions, "ids": self.ids, "examples": self.examples}


def unknown_ids(*, run: EvaluationRun, examples: int = 5) -> UnknownIds:
    """Summary of the unknown answer ids of a run, in one query."""
    lists = list(
        QuestionResult.objects.filter(run=run)
        .exclude(unknown_answer_ids=[])
        .values_list("unknown_answer_ids", flat=True)
    )
    seen: list[str] = []
    for ids in lists:
        for answer_id in ids:
            if answer_id not in seen and len(seen) < examples:
                seen.append(str(answer_id))
    return UnknownIds(questions=len(lists), ids=sum(len(ids) for ids in lists), examples=seen)
