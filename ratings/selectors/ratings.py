"""Reads of ratings and labels: labels, training progress, agreement, raters, notes, disagreements."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import TypeVar

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Avg, Count, Exists, Max, Model, OuterRef, QuerySet
from django.db.models.functions import TruncDate

from corpus.formats.records import LabelRow
from corpus.models import Answer, Collection, Membership, Question, Split
from ratings.models import Label, Rating, RatingSource, Skip


def labels_for_collection(*, collection: Collection, split: str = "all") -> QuerySet[Label]:
    """Labels of the collection, for one split ("train", "test") or "all"."""
    if split not in {"all", Split.TRAIN, Split.TEST}:
        raise ValueError(f"split must be train, test or all, not {split!r}")
    labels = Label.objects.filter(question__collection=collection)
    if split != "all":
        labels = labels.filter(question__split=split)
    return labels


def ground_truth_rows(*, collection: Collection, split: str = "all") -> Iterator[LabelRow]:
    """Labels as export rows, grouped by question (in question order), answers by external id."""
    rows = (
        labels_for_collection(collection=collection, split=split)
        .order_by("question_id", "answer__external_id")
        .values_list(
            "question__external_id",
            "question__text",
            "question__split",
            "answer__external_id",
            "gain",
            "rater_count",
            "disagreement",
            "judge_count",
        )
    )
    for row in rows.iterator(chunk_size=5000):
        yield LabelRow(*row)


def labels_by_question(*, question_ids: list[int]) -> dict[int, dict[str, int]]:
    """{question id: {answer external id: gain}} for the given questions, in one query."""
    result: dict[int, dict[str, int]] = {q: {} for q in question_ids}
    rows = Label.objects.filter(question_id__in=question_ids).values_list(
        "question_id", "answer__external_id", "gain"
    )
    for question_id, answer_id, gain in rows:
        result[question_id][answer_id] = gain
    return result


# --- training progress (trainers) ----------------------------------------------------------------


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


def multi_rated_ratings(*, collection: Collection) -> list[tuple[int, int, int, int]]:
    """(rater id, question id, answer id, stars) of every rating on a pair with 2 or more raters."""
    shared = Label.objects.filter(
        question=OuterRef("question"), answer=OuterRef("answer"), rater_count__gte=2
    )
    return list(
        Rating.objects.filter(question__collection=collection)
        .exclude(source=RatingSource.JUDGE)  # agreement between people; judges have their own page
        .filter(Exists(shared))
        .values_list("rater_id", "question_id", "answer_id", "stars")
    )


def agreement_units(*, ratings: list[tuple[int, int, int, int]]) -> list[list[int]]:
    """The stars given to each pair, one list per pair (the units of Krippendorff's alpha)."""
    by_pair: dict[tuple[int, int], list[int]] = defaultdict(list)
    for _, q, a, stars in ratings:
        by_pair[(q, a)].append(stars)
    return [stars for stars in by_pair.values() if len(stars) >= 2]


def leniency_by_rater(*, ratings: list[tuple[int, int, int, int]]) -> dict[int, tuple[float, int]]:
    """{rater id: (leniency, shared pairs)}.

    Leniency is the mean, over the pairs the rater shares with others, of the rater's stars minus the
    mean of the other raters' stars on that pair: +0.5 means half a star more generous than the others.
    """
    by_pair: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for rater, q, a, stars in ratings:
        by_pair[(q, a)].append((rater, stars))
    differences: dict[int, list[float]] = defaultdict(list)
    for entries in by_pair.values():
        if len(entries) < 2:
            continue
        total = sum(s for _, s in entries)
        for rater, stars in entries:
            others_mean = (total - stars) / (len(entries) - 1)
            differences[rater].append(stars - others_mean)
    return {rater: (sum(d) / len(d), len(d)) for rater, d in differences.items()}


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


_M = TypeVar("_M", bound=Model)


@dataclass(frozen=True)
class RatingTarget:
    """What a per-answer request (save, undo) needs, read in one query by ``rating_target``."""

    collection: Collection
    question: Question
    answer: Answer
    question_here: bool  # the question exists and is in the answer's collection
    member_role: str | None  # the user's Membership.role in the collection, None for a non-member


def rating_target(*, slug: str, question_id: int, answer_id: int, user_id: int) -> RatingTarget | None:
    """The answer in the collection ``slug``, with its collection, whether the question is in that collection,
    and the user's membership role there, in one query; None if there is no such answer in the collection.

    Raw SQL on purpose: this runs on every star clicked, and building the equivalent queryset (a join and two
    subqueries) cost ~1.4 ms of CPU per request against ~0.15 ms for this. Only the fields the hot path
    uses are loaded (the others are deferred and would load on first use); none needs a type conversion, so
    the same statement works on PostgreSQL and SQLite.
    """
    answer_t, collection_t = Answer._meta.db_table, Collection._meta.db_table
    question_t, membership_t = Question._meta.db_table, Membership._meta.db_table
    sql = f"""
        SELECT a.id, a.collection_id, a.title, a.body, c.slug, c.name,
               EXISTS (SELECT 1 FROM {question_t} q WHERE q.id = %s AND q.collection_id = a.collection_id),
               (SELECT m.role FROM {membership_t} m
                WHERE m.user_id = %s AND m.collection_id = a.collection_id LIMIT 1)
        FROM {answer_t} a JOIN {collection_t} c ON c.id = a.collection_id
        WHERE a.id = %s AND c.slug = %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [question_id, user_id, answer_id, slug])
        row = cursor.fetchone()
    if row is None:
        return None
    a_id, collection_id, title, body, c_slug, c_name, question_here, member_role = row
    collection = _partial(Collection, id=collection_id, slug=c_slug, name=c_name)
    answer = _partial(Answer, id=a_id, collection_id=collection_id, title=title, body=body)
    answer.collection = collection
    question = _partial(Question, id=question_id, collection_id=collection_id)
    question.collection = collection
    return RatingTarget(collection, question, answer, bool(question_here), member_role)


def _partial(model: type[_M], **values: object) -> _M:
    """An instance loaded with some fields (``Model.from_db`` wants them in the model's field order)."""
    names = [f.attname for f in model._meta.concrete_fields if f.attname in values]
    return model.from_db(connection.alias, names, [values[name] for name in names])


@dataclass(frozen=True)
class JudgeReply:
    """A judge's rating of one answer, with its raw reply (and any reasoning in it)."""

    answer_external_id: str
    answer_title: str
    judge: str
    stars: int
    reply: str
    counts: bool


def judge_replies(*, question_id: int) -> list[JudgeReply]:
    """The judges' ratings of a question's answers (answer id, then judge name), for its question page."""
    rows = (
        Rating.objects.filter(question_id=question_id, source=RatingSource.JUDGE)
        .select_related("answer", "rater__judge_account")
        .order_by("answer__external_id", "rater__first_name")
    )
    return [
        JudgeReply(
            r.answer.external_id,
            r.answer.title,
            r.rater.first_name or r.rater.username,
            r.stars,
            r.reply,
            bool(getattr(r.rater, "judge_account", None) and r.rater.judge_account.counts),
        )
        for r in rows
    ]


# --- notes and the ratings export -----------------------------------------------------------------------


@dataclass(frozen=True)
class RatingRow:
    """One rating as the ratings export writes it (with the rater's note)."""

    question_id: str
    question: str
    split: str
    answer_id: str
    rater: str
    stars: int
    source: str
    note: str
    updated_at: datetime

    def as_dict(self) -> dict[str, object]:
        return {
            "question_id": self.question_id,
            "question": self.question,
            "split": self.split,
            "answer_id": self.answer_id,
            "rater": self.rater,
            "stars": self.stars,
            "source": self.source,
            "note": self.note,
            "updated_at": self.updated_at.isoformat(),
        }


def rating_rows(*, collection: Collection, split: str = "all") -> Iterator[RatingRow]:
    """Every rating of the collection (one split or "all"), by question, answer and rater."""
    if split not in {"all", Split.TRAIN, Split.TEST}:
        raise ValueError(f"split must be train, test or all, not {split!r}")
    ratings = Rating.objects.filter(question__collection=collection)
    if split != "all":
        ratings = ratings.filter(question__split=split)
    rows = ratings.order_by("question__external_id", "answer__external_id", "rater__username").values_list(
        "question__external_id",
        "question__text",
        "question__split",
        "answer__external_id",
        "rater__username",
        "stars",
        "source",
        "note",
        "updated_at",
    )
    for row in rows.iterator(chunk_size=5000):
        yield RatingRow(*row)


@dataclass(frozen=True)
class RaterNote:
    answer_id: int
    answer_external_id: str
    answer_title: str
    rater: str
    stars: int
    note: str


def notes_for_question(*, question: Question) -> list[RaterNote]:
    """The notes raters left on their ratings of the question's answers, by answer then rater."""
    rows = (
        Rating.objects.filter(question=question)
        .exclude(note="")
        .order_by("answer__external_id", "rater__username")
        .values_list("answer_id", "answer__external_id", "answer__title", "rater__username", "stars", "note")
    )
    return [RaterNote(*row) for row in rows]


@dataclass(frozen=True)
class Disagreement:
    """A pair whose raters are 2 or more stars apart, with each rater's stars and note."""

    question_id: int
    question: str
    answer_external_id: str
    answer_title: str
    spread: int
    ratings: list[tuple[str, int, str]]  # (rater, stars, note), most stars first


def disagreements(
    *, collection: Collection, min_spread: int = 2, limit: int = 50
) -> tuple[int, list[Disagreement]]:
    """How many pairs have raters ``min_spread`` or more stars apart, and the first ``limit`` of them
    (widest spread first), each with its ratings and notes: two queries."""
    labels = Label.objects.filter(question__collection=collection, disagreement__gte=min_spread)
    total = labels.count()
    shown = list(
        labels.order_by("-disagreement", "question_id", "answer__external_id").values_list(
            "question_id",
            "question__text",
            "answer_id",
            "answer__external_id",
            "answer__title",
            "disagreement",
        )[:limit]
    )
    by_pair: dict[tuple[int, int], list[tuple[str, int, str]]] = defaultdict(list)
    if shown:
        pairs = Rating.objects.filter(
            question_id__in={q for q, *_ in shown}, answer_id__in={a for _, _, a, *_ in shown}
        ).order_by("-stars", "rater__username")
        for q, a, rater, stars, note in pairs.values_list(
            "question_id", "answer_id", "rater__username", "stars", "note"
        ):
            by_pair[(q, a)].append((rater, stars, note))
    return total, [
        Disagreement(q, text, ext, title, spread, by_pair[(q, a)]) for q, text, a, ext, title, spread in shown
    ]
