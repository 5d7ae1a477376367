"""The versions an http or engine ranker's service is: a model it announces as deployed (evaluated at
once), and its first version, the service as it is, which a trained reranker must beat."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from evaluation.models import RunTrigger
from evaluation.services import evaluation_start
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.services import next_version_label, version_promote


@transaction.atomic
def ranker_version_announce(*, ranker: Ranker, label: str, notes: str = "", created_by: User | None = None):
    """Record that the ranker service deployed a new model, and start its evaluation.

    Returns ``(version, run)``. Raises ValidationError for an empty, too long or already used label,
    and ``evaluation.services.EvaluationUnavailable`` when the evaluation cannot be queued; then
    nothing is stored, so the service can simply announce again.
    """
    if ranker.kind not in {RankerKind.HTTP, RankerKind.ENGINE}:
        raise ValidationError({"ranker": "Builtin rankers get versions by training here, not by announcing."})
    label = (label or "").strip()
    if not label:
        raise ValidationError({"label": "A version needs a label, e.g. the model's build id."})
    if len(label) > 100:
        raise ValidationError({"label": "A version label is at most 100 characters."})
    Ranker.objects.select_for_update().filter(pk=ranker.pk).first()
    if RankerVersion.objects.filter(ranker=ranker, label=label).exists():
        raise ValidationError({"label": f"Version {label!r} of this ranker was already announced."})
    version = RankerVersion.objects.create(ranker=ranker, label=label, notes=notes or "")
    run = evaluation_start(
        ranker=ranker, ranker_version=version, trigger=RunTrigger.VERSION, created_by=created_by
    )
    return version, run


def service_version_ensure(*, ranker: Ranker) -> RankerVersion:
    """The champion of an engine or http ranker; when it has none, a first version that is the service
    as it is ("v1", or the next free label), made champion: what a trained reranker must beat."""
    with transaction.atomic():
        locked = Ranker.objects.select_for_update().get(pk=ranker.pk)
        if locked.champion_id is not None:
            return RankerVersion.objects.get(pk=locked.champion_id)
        version = RankerVersion.objects.create(
            ranker=locked,
            label=next_version_label(locked),
            notes="The engine as it is: its own ranking, before any reranker.",
            method="",
        )
        version_promote(
            version=version,
            changed_by=None,
            reason="The engine as it is: the first version, before a reranker learned from ratings.",
        )
        ranker.refresh_from_db()
        return version
