"""Reads of ratings and labels."""

from __future__ import annotations

from collections.abc import Iterator

from django.db.models import QuerySet

from ratings.models import Label
from trainer.formats import LabelRow
from trainer.models import Collection, Split


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
