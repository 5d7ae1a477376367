"""Training progress as trainers see it: ratings a day, each rater's work, how much of each split is
labelled, a rater's session."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime

from django.contrib.auth import get_user_model
from django.db.models import Avg, Count, Max
from django.db.models.functions import TruncDate

from corpus.models import Collection, Question, Split
from ratings.models import Rating, RatingSource, Skip
from ratings.selectors.agreement import leniency_by_rater
from ratings.selectors.labels import labels_for_collection


@dataclass(frozen=True)
class DayCount:
    day: date
    ratings: int
    raters: int


def ratings_per_day(*, collection: Collection, days: int = 30) -> list[DayCount]:
    """New ratings by people per day (newest first) over the last ``days`` days that had any."""
    rows = (
        Rating.objects.filter(question__collection=collection)
        .exclude(source=RatingSource.JUDGE)
        .annotate(day=TruncDate("created_at"))
        .values("day")
        .annotate(n=Count("id"), raters=Count("rater", distinct=True))
        .order_by("-day")[:days]
    )
    return [DayCount(r["day"], r["n"], r["raters"]) for r in rows]


@dataclass(frozen=True)
class RaterSummary:
    rater_id: int
    username: str
    ratings: int
    questions: int
    mean_stars: float | None
    skips: int
    last_rated_at: datetime | None
    leniency: float | None
    shared_pairs: int


def rater_summaries(
    *, collection: Collection, ratings: list[tuple[int, int, int, int]]
) -> list[RaterSummary]:
    """Each person's work in the collection (most ratings first), with their leniency on shared pairs.
    Judges (models) are left out: their figures are on their own agreement pages."""
    leniency = leniency_by_rater(ratings=ratings)
    rows = (
        Rating.objects.filter(question__collection=collection)
        .exclude(source=RatingSource.JUDGE)
        .values("rater_id", "rater__username")
        .annotate(
            n=Count("id"),
            questions=Count("question", distinct=True),
            mean=Avg("stars"),
            last=Max("updated_at"),
        )
    )
    skips = dict(
        Skip.objects.filter(question__collection=collection)
        .values("rater_id")
        .annotate(n=Count("id"))
        .values_list("rater_id", "n")
    )
    summaries = []
    for row in rows:
        rater = row["rater_id"]
        lenient, shared = leniency.get(rater, (None, 0))
        summaries.append(
            RaterSummary(
                rater,
                row["rater__username"],
                row["n"],
                row["questions"],
                row["mean"],
                skips.pop(rater, 0),
                row["last"],
                lenient,
                shared,
            )
        )
    for rater, username in get_user_model().objects.filter(pk__in=skips).values_list("pk", "username"):
        summaries.append(RaterSummary(rater, username, 0, 0, None, skips[rater], None, None, 0))
    summaries.sort(key=lambda s: (-s.ratings, s.username))
    return summaries


@dataclass(frozen=True)
class SplitCoverage:
    split: str
    questions: int
    questions_labelled: int  # with at least one labelled answer
    candidate_pairs: int  # the ranker's current top k over the split's questions
    candidate_pairs_labelled: int

    @property
    def questions_percent(self) -> int:
        return round(100 * self.questions_labelled / self.questions) if self.questions else 0

    @property
    def pairs_percent(self) -> int:
        return (
            round(100 * self.candidate_pairs_labelled / self.candidate_pairs) if self.candidate_pairs else 0
        )


def coverage_by_split(*, collection: Collection, candidates: dict[int, list[int]]) -> list[SplitCoverage]:
    """For train and test: questions with any label, and how much of the ranker's top k is labelled."""
    split_of = dict(Question.objects.filter(collection=collection).values_list("id", "split"))
    labelled = set(labels_for_collection(collection=collection).values_list("question_id", "answer_id"))
    labelled_questions = {q for q, _ in labelled}
    result = []
    for split in (Split.TRAIN, Split.TEST):
        ids = [q for q, s in split_of.items() if s == split]
        pairs = [(q, a) for q in ids for a in candidates.get(q, [])]
        result.append(
            SplitCoverage(
                split=split,
                questions=len(ids),
                questions_labelled=sum(1 for q in ids if q in labelled_questions),
                candidate_pairs=len(pairs),
                candidate_pairs_labelled=sum(1 for p in pairs if p in labelled),
            )
        )
    return result


def rating_count_since(*, rater, collection: Collection, since: datetime) -> int:
    """Ratings the rater made or changed in the collection since a moment (their session's progress)."""
    return Rating.objects.filter(rater=rater, question__collection=collection, updated_at__gte=since).count()
