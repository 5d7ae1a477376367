"""Skips: a rater says they can't judge a question, and the queue stops offering it to them."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.models import Question
from ratings.models import Skip

SKIP_REASON_MAX_LENGTH: int = Skip._meta.get_field("reason").max_length or 500


@transaction.atomic
def question_skip(*, rater: User, question: Question, reason: str = "") -> Skip:
    """The rater can't judge the question: the queue stops offering it to them. Skipping again updates the reason."""
    reason = (reason or "").strip()
    if len(reason) > SKIP_REASON_MAX_LENGTH:
        raise ValidationError(
            {"reason": f"The reason can be at most {SKIP_REASON_MAX_LENGTH} characters, not {len(reason)}."}
        )
    skip, created = Skip.objects.get_or_create(rater=rater, question=question, defaults={"reason": reason})
    if not created and reason and skip.reason != reason:
        skip.reason = reason
        skip.save(update_fields=["reason"])
    return skip
