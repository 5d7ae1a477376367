"""Reads of rankers."""

from __future__ import annotations

from corpus.models import Collection
from rankers.models import Ranker, RankerVersion


def default_ranker(*, collection: Collection) -> Ranker | None:
    """The ranker the rating queue takes candidates from: the one marked default, else the oldest."""
    rankers = Ranker.objects.filter(collection=collection)
    return rankers.filter(is_default=True).first() or rankers.order_by("created_at", "id").first()


def ranking_version(*, ranker: Ranker) -> RankerVersion | None:
    """The version that ranks when none is named: the champion, else the latest (an http ranker whose
    announced versions nobody promoted), else None (a ranker without versions)."""
    if ranker.champion_id is not None:
        return RankerVersion.objects.filter(pk=ranker.champion_id).first()
    return RankerVersion.objects.filter(ranker=ranker).order_by("-created_at", "-id").first()
