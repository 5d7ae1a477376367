"""Reads of rankers."""

from __future__ import annotations

from corpus.models import Collection
from rankers.models import Ranker


def default_ranker(*, collection: Collection) -> Ranker | None:
    """The ranker the rating queue takes candidates from: the one marked default, else the oldest."""
    rankers = Ranker.objects.filter(collection=collection)
    return rankers.filter(is_default=True).first() or rankers.order_by("created_at", "id").first()
