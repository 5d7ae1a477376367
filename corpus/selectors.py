"""Reads of the corpus."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from corpus.models import Collection, Question, Split


def collections_for_user(*, user: User | AnonymousUser) -> QuerySet[Collection]:
    """Collections the user may see: all for a superuser, else those they are a member of."""
    if not user.is_authenticated:
        return Collection.objects.none()
    if user.is_superuser:
        return Collection.objects.all()
    return Collection.objects.filter(memberships__user=user).distinct()


def test_questions(*, collection: Collection) -> QuerySet[Question]:
    return Question.objects.filter(collection=collection, split=Split.TEST).order_by("id")
