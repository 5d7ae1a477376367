"""Undo: a rating's history (kept by every change of its stars or note) taken back one step at a time."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction

from corpus.models import Answer, Question
from ratings.models import Rating

from .labels import labels_recompute
from .locks import _lock_pair


@transaction.atomic
def rating_undo(*, rater: User, question: Question, answer: Answer) -> Rating | None:
    """Take back the rater's last change to the pair: restore the previous stars, or remove a first rating.

    Returns the rating as it now is, or None when it was removed.
    """
    _lock_pair(question.pk, answer.pk)
    rating = Rating.objects.filter(rater=rater, question=question, answer=answer).first()
    if rating is None:
        return None
    last = rating.history.order_by("-changed_at", "-id").first()
    if last is None:
        rating.delete()
        result = None
    else:
        rating.stars, rating.source, rating.note = (
            last.previous_stars,
            last.previous_source,
            last.previous_note,
        )
        rating.save(update_fields=["stars", "source", "note", "updated_at"])
        last.delete()
        result = rating
    labels_recompute(pairs=[(question.pk, answer.pk)])
    return result
