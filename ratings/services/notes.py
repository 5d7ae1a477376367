"""Notes: a rater's remark on their rating, kept in the rating's history like a change of stars."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.models import Answer, Question
from ratings.models import Rating

from .locks import _lock_pair
from .validation import validate_note
from .write import _history_row


@transaction.atomic
def rating_note_set(*, rater: User, question: Question, answer: Answer, note: object) -> Rating:
    """Set (or clear, with "") the note on the rater's rating of the pair.

    A note belongs to a rating, so the pair must be rated first (ValidationError on ``note``). A changed
    note keeps the rating's previous state in its history (stars unchanged), so undo takes it back like
    a change of stars; the label does not depend on notes and is left alone.
    """
    return _note_set(rater, question, answer, validate_note(note), history=True)


def _note_set(rater: User, question: Question, answer: Answer, cleaned: str, *, history: bool) -> Rating:
    """``rating_note_set``'s work, inside the caller's transaction; ``history``: keep the previous state
    when the note changes (``rating_record`` saving stars and a note at once keeps one step, not two)."""
    _lock_pair(question.pk, answer.pk)
    rating = Rating.objects.filter(rater=rater, question=question, answer=answer).first()
    if rating is None:
        raise ValidationError({"note": "Rate the answer before adding a note to the rating."})
    if rating.note != cleaned and history:
        _history_row(rating, new_stars=rating.stars).save()
    if rating.note != cleaned:
        rating.note = cleaned
        rating.save(update_fields=["note", "updated_at"])
    rating.rater, rating.question, rating.answer = rater, question, answer
    return rating
