"""Reads of the imports of judgments (``GroundTruthImport``): which questions the learner reads as
complete, and the imports as the manage page, the API and a training name them."""

from __future__ import annotations

from collections.abc import Collection as Collection_
from dataclasses import dataclass

from django.db.models import Count, Q, QuerySet

from corpus.models import Collection, Question, Split
from ratings.models import GroundTruthImport


def _questions(*, collection: Collection, split: str) -> QuerySet[Question]:
    if split not in {"all", Split.TRAIN, Split.TEST}:
        raise ValueError(f"split must be train, test or all, not {split!r}")
    questions = Question.objects.filter(collection=collection)
    return questions if split == "all" else questions.filter(split=split)


def complete_question_ids(*, collection: Collection, split: str = "all") -> set[int]:
    """Questions of the collection (one split or "all") judged by an import whose answers not listed are
    incorrect (``GroundTruthImport.unlisted_incorrect``): the learner reads their unlisted answers as 0
    stars. A question only people rated, or only imports with the option off, is not complete."""
    return set(
        _questions(collection=collection, split=split)
        .filter(ground_truth_imports__unlisted_incorrect=True)
        .values_list("id", flat=True)
        .distinct()
    )


@dataclass(frozen=True)
class ImportRow:
    """An import as the manage page and the API list it."""

    record: GroundTruthImport
    questions: int  # the questions it judged
    training_questions: int  # ...of them in the training split (what the learner reads)


def ground_truth_imports(*, collection: Collection, import_id: int | None = None) -> list[ImportRow]:
    """The collection's imports of judgments (or the one ``import_id``, if it is the collection's), oldest
    first, with how many questions each judged (one query)."""
    records = GroundTruthImport.objects.filter(collection=collection)
    if import_id is not None:
        records = records.filter(pk=import_id)
    rows = (
        records.select_related("rater", "created_by")
        .annotate(
            n_questions=Count("questions", distinct=True),
            n_training=Count("questions", filter=Q(questions__split=Split.TRAIN), distinct=True),
        )
        .order_by("id")
    )
    return [ImportRow(record=r, questions=r.n_questions, training_questions=r.n_training) for r in rows]


def imports_judging(
    *, collection: Collection, question_ids: Collection_[int] | QuerySet, unlisted_incorrect: bool
) -> list[tuple[GroundTruthImport, int]]:
    """The collection's imports whose option is ``unlisted_incorrect`` that judged some of ``question_ids``
    (a list, a set or a query), oldest first, each with how many of them it judged; one query."""
    records = (
        GroundTruthImport.objects.filter(collection=collection, unlisted_incorrect=unlisted_incorrect)
        .annotate(judged=Count("questions", filter=Q(questions__id__in=question_ids), distinct=True))
        .filter(judged__gt=0)
        .order_by("id")
    )
    return [(record, record.judged) for record in records]
