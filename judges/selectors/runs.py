"""A collection's judges and a judge's runs, newest first."""

from __future__ import annotations

from django.db.models import QuerySet

from corpus.models import Collection
from judges.models import Judge, Judging


def judges_of(*, collection: Collection) -> QuerySet[Judge]:
    return (
        Judge.objects.filter(collection=collection)
        .select_related("account", "collection")
        .order_by("name", "id")
    )


def judgings_of(*, judge: Judge) -> QuerySet[Judging]:
    return Judging.objects.filter(judge=judge).order_by("-created_at", "-id")


def latest_judging(*, judge: Judge) -> Judging | None:
    return Judging.objects.filter(judge=judge).order_by("-created_at", "-id").first()
