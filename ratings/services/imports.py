"""Imported ground truth: a file's judgments written as the ratings of one import rater."""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User

from ratings.models import RatingSource

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
