"""Labels by collection and by question, and the exports' rows of labels and of ratings."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from corpus.formats.records import LabelRow
from corpus.models import Collection, Split
from ratings.models import Label, Rating


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
