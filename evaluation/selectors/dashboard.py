"""Reads for the dashboard of one ranker: its latest and active run, the history chart with the champion
changes marked, and a rater's own contribution."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q
from django.utils import timezone

from corpus.models import Collection, Split
from evaluation.models import EvaluationRun, RunStatus
from evaluation.numbers import count, figure
from rankers.models import ChampionChange, OnlineTest, Ranker
from ratings.models import Rating

from .runs import runs_for_ranker

ACTIVE = [RunStatus.PENDING, RunStatus.RUNNING]
RECENT_RUNS = 10
CHAMPION_MARKS = 200


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
        return figure(self.ndcg)

    @property
    def accuracy_text(self) -> str:
        return figure(self.accuracy)

    @property
    def labels_text(self) -> str:
        return count(self.label_count)

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
        EvaluationRun.objects.succeeded()
        .filter(ranker=ranker)
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


@dataclass(frozen=True)
class ChampionMark:
    """A change of champion, as an annotation on the history chart and a row under it."""

    created_at: datetime
    version: str
    previous: str
    by: str  # a username, or "policy" when the promotion policy decided after a training

    @property
    def date_text(self) -> str:
        return self.created_at.strftime("%Y-%m-%d %H:%M")

    @property
    def text(self) -> str:
        return f"{self.previous} → {self.version}" if self.previous else self.version

    def as_json(self) -> dict:
        return {
            "t": int(self.created_at.timestamp()),
            "date": self.date_text,
            "text": self.text,
            "by": self.by,
        }


def champion_marks(*, ranker: Ranker) -> list[ChampionMark]:
    """The ranker's champion changes, oldest first (the most recent CHAMPION_MARKS), in one query."""
    rows = (
        ChampionChange.objects.filter(ranker=ranker)
        .order_by("-created_at", "-id")
        .values_list("created_at", "version__label", "previous__label", "changed_by__username")[
            :CHAMPION_MARKS
        ]
    )
    return [
        ChampionMark(created_at=created, version=version, previous=previous or "", by=by or "policy")
        for created, version, previous, by in reversed(rows)
    ]


@dataclass(frozen=True)
class OnlineMark:
    """An online test of one of the ranker's versions, listed under the history."""

    started_at: datetime
    stopped_at: datetime | None
    challenger: str
    champion: str
    state: str
    stop_reason: str
    challenger_id: int  # the version page, where the test's figures and verdict are

    def as_json(self) -> dict:
        """What the history chart draws: a band from the start to the stop (``end`` null while running)."""
        return {
            "start": int(self.started_at.timestamp()),
            "end": None if self.stopped_at is None else int(self.stopped_at.timestamp()),
            "label": f"online: {self.challenger} vs {self.champion}",
        }

    @property
    def text(self) -> str:
        start = self.started_at.strftime("%Y-%m-%d %H:%M")
        if self.stopped_at is None:
            return f"{start}: online test of {self.challenger} against {self.champion}, running"
        end = self.stopped_at.strftime("%Y-%m-%d %H:%M")
        return (
            f"{start} to {end}: online test of {self.challenger} against {self.champion}. {self.stop_reason}"
        )


def online_marks(*, ranker: Ranker) -> list[OnlineMark]:
    """The online tests of the ranker's versions, newest first (the most recent CHAMPION_MARKS), in one
    query."""
    rows = (
        OnlineTest.objects.filter(challenger__ranker=ranker)
        .order_by("-started_at", "-id")
        .values_list(
            "started_at",
            "stopped_at",
            "challenger__label",
            "champion__label",
            "state",
            "stop_reason",
            "challenger_id",
        )[:CHAMPION_MARKS]
    )
    return [OnlineMark(*row) for row in rows]


@dataclass
class Dashboard:
    collection: Collection
    ranker: Ranker
    rankers: list[Ranker]
    latest: EvaluationRun | None
    active: EvaluationRun | None
    history: list[HistoryPoint]
    recent_runs: list[EvaluationRun] = field(default_factory=list)
    champion_changes: list[ChampionMark] = field(default_factory=list)
    online_tests: list[OnlineMark] = field(default_factory=list)

    @property
    def failed_runs(self) -> list[EvaluationRun]:
        return [r for r in self.recent_runs if r.status == RunStatus.FAILED]


def rankers_for_dashboard(*, collection: Collection) -> list[Ranker]:
    """The collection's rankers, the default one first."""
    return list(Ranker.objects.filter(collection=collection).order_by("-is_default", "name", "id"))


def dashboard(*, collection: Collection, ranker: Ranker, rankers: list[Ranker] | None = None) -> Dashboard:
    """Everything the dashboard shows for one ranker, in four queries (five without ``rankers``; one more
    when the champion's latest run is not the ranker's latest)."""
    if rankers is None:
        rankers = rankers_for_dashboard(collection=collection)
    runs = runs_for_ranker(ranker=ranker)
    recent = list(runs[:RECENT_RUNS])
    # The headline is the champion's: evaluating a challenger (from the Rankers or compare page) adds a
    # point to the history, not a new headline. A ranker whose champion was never evaluated shows its
    # latest run.
    succeeded = runs.succeeded()
    latest = (
        succeeded.filter(ranker_version_id=ranker.champion_id).first() if ranker.champion_id else None
    ) or succeeded.first()
    active = next((r for r in recent if r.status in ACTIVE), None)
    return Dashboard(
        collection=collection,
        ranker=ranker,
        rankers=rankers,
        latest=latest,
        active=active,
        history=history(ranker=ranker),
        recent_runs=recent,
        champion_changes=champion_marks(ranker=ranker),
        online_tests=online_marks(ranker=ranker),
    )


# "This week" on a rater's dashboard: the last seven days, whatever day it is.
RECENT_DAYS = 7


@dataclass(frozen=True)
class Contribution:
    ratings: int
    test_ratings: int
    recent_ratings: int  # made in the last ``recent_days`` days
    recent_days: int = RECENT_DAYS


def rater_contribution(*, user: AbstractBaseUser, collection: Collection) -> Contribution:
    """The user's ratings in the collection (how many are on test questions, how many are from the last
    ``RECENT_DAYS`` days), in one query."""
    since = timezone.now() - timedelta(days=RECENT_DAYS)
    counts = Rating.objects.filter(rater_id=user.pk, question__collection=collection).aggregate(
        total=Count("id"),
        test=Count("id", filter=Q(question__split=Split.TEST)),
        recent=Count("id", filter=Q(created_at__gte=since)),
    )
    return Contribution(ratings=counts["total"], test_ratings=counts["test"], recent_ratings=counts["recent"])
