"""Agreement between people: the ratings of pairs rated more than once, each rater's leniency, and the
pairs whose raters disagree."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Exists, OuterRef

from corpus.models import Collection
from ratings.models import Label, Rating, RatingSource


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
