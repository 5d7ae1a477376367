"""Which versions are compared: the ones a trainer picked, else the champion and the newest other
version (the training loop's latest challenger)."""

from __future__ import annotations

from dataclasses import dataclass

from rankers.models import Ranker, RankerVersion
from rankers.selectors import ranking_version


@dataclass(frozen=True)
class VersionPair:
    """The champion and the challenger compared (``challenger`` None: only the headline)."""

    champion: RankerVersion
    challenger: RankerVersion | None


def version_pair(
    *, ranker: Ranker, champion_id: object = None, challenger_id: object = None
) -> VersionPair | None:
    """The versions a trainer picked, else the champion and the newest other version (the training
    loop's latest challenger). None when the ranker has no version. Ids of another ranker are ignored."""
    versions = {v.pk: v for v in RankerVersion.objects.filter(ranker=ranker)}
    if not versions:
        return None

    def pick(value: object) -> RankerVersion | None:
        text = str(value or "")
        return versions.get(int(text)) if text.isdigit() else None

    champion = pick(champion_id) or ranking_version(ranker=ranker)
    if champion is None:
        return None
    challenger = pick(challenger_id)
    if challenger is None and challenger_id in (None, ""):
        others = [v for v in versions.values() if v.pk != champion.pk]
        challenger = max(others, key=lambda v: (v.created_at, v.pk)) if others else None
    if challenger is not None and challenger.pk == champion.pk:
        challenger = None
    return VersionPair(champion, challenger)


def version_text(version: RankerVersion) -> str:
    return f"version {version.label}"
