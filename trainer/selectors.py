"""Reads of the core domain."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet

from trainer.models import Collection, Question, Ranker, Split


def collections_for_user(*, user: User | AnonymousUser) -> QuerySet[Collection]:
    """Collections the user may see: all for a superuser, else those they are a member of."""
    if not user.is_authenticated:
        return Collection.objects.none()
    if user.is_superuser:
        return Collection.objects.all()
    return Collection.objects.filter(memberships__user=user).distinct()


def test_questions(*, collection: Collection) -> QuerySet[Question]:
    return Question.objects.filter(collection=collection, split=Split.TEST).order_by("id")


def default_ranker(*, collection: Collection) -> Ranker | None:
    """The ranker the rating queue takes candidates from: the one marked default, else the oldest."""
    rankers = Ranker.objects.filter(collection=collection)
    return rankers.filter(is_default=True).first() or rankers.order_by("created_at", "id").first()
