"""Writes of rankers: creating them and numbering their versions."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.models import Collection
from rankers.config import validate_ranker_config
from rankers.models import Ranker, RankerKind, RankerVersion


@transaction.atomic
def ranker_create(
    *, collection: Collection, name: str, kind: str, config: object = None, is_default: bool = False
) -> Ranker:
    """Create a ranker after checking its config (see ``rankers.config``).

    Raises ValidationError naming the field: ``name`` (empty, too long or taken in this collection),
    ``kind``, or the config key that is wrong. Making it the default unsets the previous default.
    """
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": "A ranker needs a name."})
    if len(name) > 200:
        raise ValidationError({"name": "A ranker name is at most 200 characters."})
    if kind not in RankerKind.values:
        raise ValidationError({"kind": f"kind must be one of {', '.join(RankerKind.values)}, not {kind!r}."})
    cleaned = validate_ranker_config(kind=kind, config={} if config is None else config)
    if Ranker.objects.filter(collection=collection, name=name).exists():
        raise ValidationError({"name": f"This collection already has a ranker named {name!r}."})
    if is_default:
        Ranker.objects.select_for_update().filter(collection=collection, is_default=True).update(
            is_default=False
        )
    return Ranker.objects.create(
        collection=collection, name=name, kind=kind, config=cleaned, is_default=is_default
    )


def next_version_label(ranker: Ranker) -> str:
    """The first free label v1, v2, … of the ranker's versions."""
    taken = set(RankerVersion.objects.filter(ranker=ranker).values_list("label", flat=True))
    number = len(taken) + 1
    while f"v{number}" in taken:
        number += 1
    return f"v{number}"
