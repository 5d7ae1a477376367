"""Reads of evaluation runs for the dashboard, the drilldown and the API.

Every function runs a fixed number of queries whatever the number of runs, questions or ratings
(the dashboard tests assert it), so pages stay fast with a long history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, F, Q, QuerySet

from corpus.models import Collection, Split
from evaluation.models import EvaluationRun, QuestionResult, RunStatus
from rankers.models import Ranker
from ratings.models import Rating

ACTIVE = [RunStatus.PENDING, RunStatus.RUNNING]


def runs_for_ranker(*, ranker: Ranker) -> QuerySet[EvaluationRun]:
    """Every run of the ranker, newest first (failed ones included: the user must see them)."""
    return (
        EvaluationRun.objects.filter(ranker=ranker)
        .select_related("ranker", "ranker_version", "collection", "created_by")
        .order_by("-created_at", "-id")
    )


def run_detail(*, run_id: int) -> EvaluationRun | None:
    """One run with its ranker, version, collection and previous run, or None."""
    return (
        EvaluationRun.objects.select_related(
            "ranker", "ranker_version", "collection", "previous_run", "created_by"
        )
        .filter(pk=run_id)
        .first()
    )


def question_results(*, run: EvaluationRun) -> QuerySet[QuestionResult]:
    """The run's per-question results, worst NDCG first; questions without a defined NDCG come last."""
    return (
        QuestionResult.objects.filter(run=run)
        .select_related("question")
        .order_by(F("ndcg").asc(nulls_last=True), "question_id")
    )


@dataclass(frozen=True)
class HistoryPoint:
    run_id: int
    created_at: datetime
    ndcg: float | None
    ndcg_ci_low: float | None
    ndcg_ci_high: float | None
    accuracy: float | None
    label_count: int | None
    version: str

    @property
    def date_text(self) -> str:
        return self.created_at.strftime("%Y-%m-%d %H:%M")

    @property
    def ndcg_text(self) -> str:
        return "–" if self.ndcg is None else f"{self.ndcg:.3f}"

    @property
    def accuracy_text(self) -> str:
        return "–" if self.accuracy is None else f"{self.accuracy:.3f}"

    @property
    def labels_text(self) -> str:
        return "–" if self.label_count is None else f"{self.label_count:,}"

    def as_json(self) -> dict:
        return {
            "run": self.run_id,
            "t": int(self.created_at.timestamp()),
            "date": self.created_at.strftime("%Y-%m-%d %H:%M"),
            "ndcg": self.ndcg,
            "accuracy": self.accuracy,
            "labels": self.label_count,
            "version": self.version,
        }


def history(*, ranker: Ranker) -> list[HistoryPoint]:
    """Successful runs of the ranker, oldest first: the chart's points (failed runs are left out)."""
    rows = (
        EvaluationRun.objects.filter(ranker=ranker, status=RunStatus.SUCCEEDED)
        .order_by("created_at", "id")
        .values_list(
            "id",
            "created_at",
            "ndcg_mean",
            "ndcg_ci_low",
            "ndcg_ci_high",
            "accuracy_mean",
            "label_count",
            "ranker_version__label",
        )
    )
    return [HistoryPoint(*row[:7], version=row[7] or "no version") for row in rows]


@dataclass
class Dashboard:
    collection: Collection
    ranker: Ranker
    rankers: list[Ranker]
    latest: EvaluationRun | None
    active: EvaluationRun | None
    history: list[HistoryPoint]
    recent_runs: list[EvaluationRun] = field(default_factory=list)

    @property
    def failed_runs(self) -> list[EvaluationRun]:
        return [r for r in self.recent_runs if r.status == RunStatus.FAILED]


RECENT_RUNS = 10


def rankers_for_dashboard(*, collection: Collection) -> list[Ranker]:
    """The collection's rankers, the default one first."""
    return list(Ranker.objects.filter(collection=collection).order_by("-is_default", "name", "id"))


def dashboard(*, collection: Collection, ranker: Ranker, rankers: list[Ranker] | None = None) -> Dashboard:
    """Everything the dashboard shows for one ranker, in three queries (four without ``rankers``)."""
    if rankers is None:
        rankers = rankers_for_dashboard(collection=collection)
    runs = runs_for_ranker(ranker=ranker)
    recent = list(runs[:RECENT_RUNS])
    latest = runs.filter(status=RunStatus.SUCCEEDED).first()
    active = next((r for r in recent if r.status in ACTIVE), None)
    return Dashboard(
        collection=collection,
        ranker=ranker,
        rankers=rankers,
        latest=latest,
        active=active,
        history=history(ranker=ranker),
        recent_runs=recent,
    )


def worst_questions(*, run: EvaluationRun, limit: int) -> list[QuestionResult]:
    """The run's questions with the lowest NDCG (only those with a known good answer)."""
    return list(
        QuestionResult.objects.filter(run=run, ndcg__isnull=False)
        .select_related("question")
        .order_by("ndcg", "question_id")[:limit]
    )


def no_good_answer_questions(*, run: EvaluationRun, limit: int = 50) -> list[QuestionResult]:
    """Questions the ranker answered but where no answer is known to be relevant (NDCG undefined)."""
    return list(
        QuestionResult.objects.filter(run=run, ndcg__isnull=True, error="")
        .select_related("question")
        .order_by("question_id")[:limit]
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


@dataclass(frozen=True)
class Contribution:
    ratings: int
    test_ratings: int


def rater_contribution(*, user: AbstractBaseUser, collection: Collection) -> Contribution:
    """The user's ratings in the collection (and how many are on test questions), in one query."""
    counts = Rating.objects.filter(rater_id=user.pk, question__collection=collection).aggregate(
        total=Count("id"), test=Count("id", filter=Q(question__split=Split.TEST))
    )
    return Contribution(ratings=counts["total"], test_ratings=counts["test"])


@dataclass(frozen=True)
class QuestionDelta:
    question_id: int
    external_id: str
    text: str
    ndcg_a: float | None
    ndcg_b: float | None
    hit_a: bool | None
    hit_b: bool | None

    @property
    def delta(self) -> float | None:
        if self.ndcg_a is None or self.ndcg_b is None:
            return None
        return self.ndcg_b - self.ndcg_a

    @property
    def ndcg_a_text(self) -> str:
        return "–" if self.ndcg_a is None else f"{self.ndcg_a:.3f}"

    @property
    def ndcg_b_text(self) -> str:
        return "–" if self.ndcg_b is None else f"{self.ndcg_b:.3f}"

    @property
    def delta_text(self) -> str:
        return "–" if self.delta is None else f"{self.delta:+.3f}".replace("-", "−")


def run_comparison(*, run_a: EvaluationRun, run_b: EvaluationRun) -> list[QuestionDelta]:
    """Per-question NDCG of two runs side by side (B − A), biggest winners first, then losers.

    Questions in only one run, or without a defined NDCG in either, come last with no delta.
    """
    fields = ("question_id", "question__external_id", "question__text", "ndcg", "accuracy_hit")
    a = {row[0]: row for row in QuestionResult.objects.filter(run=run_a).values_list(*fields)}
    b = {row[0]: row for row in QuestionResult.objects.filter(run=run_b).values_list(*fields)}
    deltas = []
    for question_id in sorted(a.keys() | b.keys()):
        ra, rb = a.get(question_id), b.get(question_id)
        some = ra or rb
        assert some is not None
        deltas.append(
            QuestionDelta(
                question_id=question_id,
                external_id=some[1],
                text=some[2],
                ndcg_a=ra[3] if ra else None,
                ndcg_b=rb[3] if rb else None,
                hit_a=ra[4] if ra else None,
                hit_b=rb[4] if rb else None,
            )
        )
    deltas.sort(key=lambda d: (d.delta is None, -(d.delta or 0.0), d.question_id))
    return deltas
