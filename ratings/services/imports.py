"""Imported ground truth: a file's judgments written as the ratings of one import rater, and the import
kept as a row (``GroundTruthImport``) with its "answers not listed are incorrect" option."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from django.contrib.auth.models import User
from django.db import transaction

from corpus.models import Collection
from ratings.models import GroundTruthImport, RatingSource

from .write import RatingRow, RatingsWritten, ratings_write


def ratings_import(
    *, rater: User, judgments: Sequence[tuple[int, int, int]], source: str = RatingSource.IMPORT
) -> RatingsWritten:
    """Bulk-record ``(question_id, answer_id, stars)`` by one rater, e.g. an imported ground truth.

    Ratings that already have these stars are left alone, so re-importing the same file changes nothing.
    The caller has validated ids and stars (importers report errors with file and line first). Without
    pair locks (see ``ratings_write``): an import may hold more pairs than PostgreSQL can lock at once.
    """
    return ratings_write(
        rater=rater, rows=[RatingRow(q, a, stars) for q, a, stars in judgments], source=source, lock=False
    )


def ground_truth_import_record(
    *,
    collection: Collection,
    rater: User,
    question_ids: Iterable[int],
    judgments: int,
    files: Sequence[str] = (),
    unlisted_incorrect: bool = True,
    created_by: User | None = None,
) -> GroundTruthImport:
    """Keep an import of judgments: its files, the questions it judged and its option (a row each time,
    also when re-importing the same file: each import is named with its own option)."""
    record = GroundTruthImport.objects.create(
        collection=collection,
        rater=rater,
        created_by=created_by,
        files=", ".join(files)[:500],
        judgments=judgments,
        unlisted_incorrect=unlisted_incorrect,
    )
    through = GroundTruthImport.questions.through
    through.objects.bulk_create(
        [through(groundtruthimport_id=record.pk, question_id=q) for q in sorted(set(question_ids))],
        batch_size=5000,
    )
    return record


@transaction.atomic
def ground_truth_import_set(*, record: GroundTruthImport, unlisted_incorrect: bool) -> GroundTruthImport:
    """Turn an import's "answers not listed for a judged question are incorrect" on or off. The labels
    do not change; the next training (and export, and the positive-only check) reads the new option."""
    record.unlisted_incorrect = unlisted_incorrect
    record.save(update_fields=["unlisted_incorrect"])
    return record
