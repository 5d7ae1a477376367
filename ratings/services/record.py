"""People's saves: a rater's stars from the rating page or the API, checked, with a note, lists retried.

``rating_record`` checks one rating (stars 0–3, the pair in one collection, the note) and writes it with
``write.rating_write``. ``ratings_record`` writes several at once (an API list, the rating page's plain
form): it locks all their pairs first in one fixed order, so two lists of the same pairs in different
orders can't deadlock, and runs the transaction again when PostgreSQL aborts it anyway (deadlock or
serialization failure), then gives up with ``RatingsBusy`` (the API's 503).
"""

from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.models import Answer, Question
from ratings.models import Rating, RatingSource

from .locks import _lock_pairs, _run_retrying
from .notes import _note_set
from .validation import validate_note, validate_stars
from .write import rating_write


def rating_record(
    *,
    rater: User,
    question: Question,
    answer: Answer,
    stars: object,
    source: str = RatingSource.WEB,
    note: str | None = None,
) -> Rating:
    """Record (or change) the rater's stars for the pair and update the pair's label (``rating_write``).

    ``note`` (None: leave it as it is) sets the rating's note in the same transaction
    (``rating_note_set``). Bad stars, a bad note or a pair across collections raise ValidationError and
    store nothing.
    """
    value = validate_stars(stars)
    if answer.collection_id != question.collection_id:
        raise ValidationError({"answer": "This answer belongs to another collection than the question."})
    if note is None:
        return rating_write(rater=rater, question=question, answer=answer, stars=value, source=source)
    cleaned = validate_note(note)
    with transaction.atomic():
        before = (
            Rating.objects.filter(rater=rater, question=question, answer=answer)
            .values_list("stars", flat=True)
            .first()
        )
        saved = rating_write(rater=rater, question=question, answer=answer, stars=value, source=source)
        # One save, one step back: a new rating or a change of stars already has its undo (removing
        # the rating, or the history row that keeps the old note too), so the note adds none.
        rating = _note_set(rater, question, answer, cleaned, history=before == value)
        rating.saved_label = saved.saved_label  # a note leaves the label as it is
        return rating


def ratings_record(
    *,
    rater: User,
    ratings: Sequence[tuple[Question, Answer, object]],
    source: str = RatingSource.WEB,
    notes: Sequence[str | None] | None = None,
) -> list[Rating]:
    """Record several ``(question, answer, stars)`` of one rater, all or nothing, with their labels.

    ``notes``, when given, holds each rating's note (None: leave it as it is).

    The pairs are locked first, all of them, in one fixed order (``_lock_pairs``), so lists of the same
    pairs in any order never deadlock each other; a transaction PostgreSQL still aborts (a deadlock with
    another kind of writer, a serialization failure) is run again a few times before ``RatingsBusy``.
    Bad stars or a pair across collections raise ``ValidationError`` and store nothing.
    """
    for _, _, stars in ratings:
        validate_stars(stars)
    each_note = list(notes) if notes is not None else [None] * len(ratings)
    for note in each_note:
        if note is not None:
            validate_note(note)
    if len(ratings) == 1:
        # One pair needs no lock order, and ``rating_record`` is already one transaction (on PostgreSQL
        # one round trip): wrapping it would add BEGIN, the lock and COMMIT to the API's most common call.
        ((question, answer, stars),) = ratings
        return _run_retrying(
            lambda: [
                rating_record(
                    rater=rater,
                    question=question,
                    answer=answer,
                    stars=stars,
                    source=source,
                    note=each_note[0],
                )
            ]
        )

    @transaction.atomic
    def work() -> list[Rating]:
        _lock_pairs((question.pk, answer.pk) for question, answer, _ in ratings)
        return [
            rating_record(
                rater=rater, question=question, answer=answer, stars=stars, source=source, note=note
            )
            for (question, answer, stars), note in zip(ratings, each_note, strict=True)
        ]

    return _run_retrying(work)
