"""Imports that carry ratings: a collection's answers, questions and judgments written at once, the
judgments as ratings by a named import rater."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from celery import current_app
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction

from corpus.formats.common import FormatError
from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord
from corpus.models import Answer, Collection, Question
from corpus.services import UpsertSummary, answers_upsert, questions_upsert
from ratings.models import GroundTruthImport
from ratings.services import ground_truth_import_record, ratings_import

logger = logging.getLogger(__name__)

IMPORT_RATER_DEFAULT = "ground-truth"


def import_rater(*, username: str = IMPORT_RATER_DEFAULT) -> User:
    """The named user that imported ground truth is rated by (it cannot log in)."""
    user, created = get_user_model().objects.get_or_create(username=username, defaults={"is_active": True})
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


@dataclass
class ImportSummary:
    answers: UpsertSummary = field(default_factory=UpsertSummary)
    questions: UpsertSummary = field(default_factory=UpsertSummary)
    ratings_created: int = 0
    ratings_updated: int = 0
    ratings_unchanged: int = 0
    # The import kept with its option (None when the files held no judgments).
    ground_truth_import: GroundTruthImport | None = None
    judged_questions: int = 0

    @property
    def option_sentence(self) -> str:
        """What the learner reads between the import's judgments, in words ("" without judgments)."""
        record = self.ground_truth_import
        if record is None:
            return ""
        questions = f"{self.judged_questions} judged question{'s' if self.judged_questions != 1 else ''}"
        if record.unlisted_incorrect:
            return (
                f"The training reads the answers that {record.name} does not list for its {questions} as "
                "0 stars."
            )
        return f"The answers that {record.name} does not list for its {questions} stay unknown (not rated)."

    def __str__(self) -> str:
        def part(name: str, s: UpsertSummary) -> str:
            return f"{name}: {s.created} new, {s.updated} updated, {s.unchanged} unchanged"

        return "; ".join(
            [
                part("answers", self.answers),
                part("questions", self.questions),
                f"ratings: {self.ratings_created} new, {self.ratings_updated} updated, "
                f"{self.ratings_unchanged} unchanged",
            ]
        )


@transaction.atomic
def collection_import(
    *,
    collection: Collection,
    answers: Sequence[AnswerRecord] = (),
    questions: Sequence[QuestionRecord] = (),
    judgments: Sequence[JudgmentRecord] = (),
    rater_username: str = IMPORT_RATER_DEFAULT,
    unlisted_incorrect: bool = True,
    files: Sequence[str] = (),
    created_by: User | None = None,
    progress: Callable[[str], None] = lambda step: None,
) -> ImportSummary:
    """Import parsed records into the collection, all or nothing.

    Judgments become ratings by the named import rater (source "import"), so they flow into labels like
    human ratings do. An import with judgments is kept (``GroundTruthImport``: ``files``, the trainer who
    ``created_by`` it, the questions it judged) with ``unlisted_incorrect``: whether the learner reads an
    answer it does not list for a judged question as 0 stars (on, as trec_eval reads qrels) or unknown.
    A judgment naming an unknown question or answer raises FormatError with its file and line, and the
    transaction leaves the database as it was.
    """
    summary = ImportSummary()
    progress(f"writing {len(answers)} answers")
    summary.answers = answers_upsert(collection=collection, records=answers)
    if summary.answers.created or summary.answers.updated:
        transaction.on_commit(lambda: _index_build_soon(collection_id=collection.pk))
    progress(f"writing {len(questions)} questions")
    summary.questions = questions_upsert(collection=collection, records=questions)
    progress(f"writing {len(judgments)} ratings")
    if judgments:
        answer_ids = dict(Answer.objects.filter(collection=collection).values_list("external_id", "id"))
        question_ids = dict(Question.objects.filter(collection=collection).values_list("external_id", "id"))
        rows: dict[tuple[int, int], int] = {}
        for j in judgments:
            if j.question_id not in question_ids:
                raise FormatError(
                    j.file, j.line, f"question id {j.question_id} not in collection {collection.slug}"
                )
            if j.answer_id not in answer_ids:
                raise FormatError(
                    j.file, j.line, f"answer id {j.answer_id} not in collection {collection.slug}"
                )
            rows[(question_ids[j.question_id], answer_ids[j.answer_id])] = j.stars
        rater = import_rater(username=rater_username)
        result = ratings_import(rater=rater, judgments=[(q, a, s) for (q, a), s in rows.items()])
        judged = {q for q, _ in rows}
        summary.judged_questions = len(judged)
        summary.ground_truth_import = ground_truth_import_record(
            collection=collection,
            rater=rater,
            question_ids=judged,
            judgments=len(rows),
            files=files,
            unlisted_incorrect=unlisted_incorrect,
            created_by=created_by,
        )
        summary.ratings_created, summary.ratings_updated, summary.ratings_unchanged = (
            result.created,
            result.updated,
            result.unchanged,
        )
    return summary


def _index_build_soon(*, collection_id: int) -> None:
    """Ask a worker to rebuild the BM25 index now, so the first ranking after an import isn't the one
    that waits for it. Best effort: with the broker down the index is still built on first use."""
    try:
        current_app.send_task("rankers.index_build", kwargs={"collection_id": collection_id})
    except Exception:  # kombu raises several transport-specific errors; none may fail the import
        logger.warning(
            "could not queue the index build of collection %s; it will build on first use", collection_id
        )
