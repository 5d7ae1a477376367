"""What the compare page offers and what a choice means: any evaluation run of the collection, or any
version of its rankers (champion or not), which is compared through its latest successful run, or ranked
now when it has none (``evaluation.services.versions_compare``) or evaluated first.

A choice is written ``<run id>`` (as the links from the dashboard and the run pages always were) or
``v<version id>``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db.models import Exists, OuterRef

from corpus.models import Collection
from evaluation.models import EvaluationRun, RunStatus
from rankers.models import RankerVersion

from .runs import run_in_collection

# The options listed: the most recent runs of the collection, the most recent versions of each ranker.
CHOICE_RUNS = 200
CHOICE_VERSIONS = 50
_VERSION = re.compile(r"v(\d{1,18})")


@dataclass(frozen=True)
class Choice:
    """One side of a comparison: a run, or a version with its latest successful run (None: not yet)."""

    value: str  # as the form sends it: "12" or "v3"
    run: EvaluationRun | None
    version: RankerVersion | None = None
    active: EvaluationRun | None = None  # a version's evaluation under way (pending or running)

    @property
    def name(self) -> str:
        """How the page names it: "BM25 v2" for a version, "run 12" for a run."""
        if self.version is not None:
            return f"{self.version.ranker.name} {self.version.label}"
        assert self.run is not None
        return f"run {self.run.pk}"


def _latest_runs(version: RankerVersion) -> tuple[EvaluationRun | None, EvaluationRun | None]:
    """The version's latest successful run and its evaluation under way, if any."""
    runs = EvaluationRun.objects.select_related("ranker", "ranker_version").filter(ranker_version=version)
    done = runs.succeeded().order_by("-created_at", "-id").first()
    active = (
        runs.filter(status__in=[RunStatus.PENDING, RunStatus.RUNNING]).order_by("-created_at", "-id").first()
    )
    return done, active


def choice_of(*, value: str, collection: Collection) -> Choice | None:
    """What ``value`` (from a query string: anything) chooses in the collection; None when nothing."""
    value = value.strip()
    matched = _VERSION.fullmatch(value)
    if matched:
        version = (
            RankerVersion.objects.select_related("ranker")
            .filter(pk=int(matched.group(1)), ranker__collection=collection)
            .first()
        )
        if version is None:
            return None
        done, active = _latest_runs(version)
        return Choice(value=value, run=done, version=version, active=active)
    run = run_in_collection(run_id=value, collection=collection) if value.isdigit() else None
    return Choice(value=value, run=run) if run is not None else None


@dataclass(frozen=True)
class Options:
    """The choices the compare page's selects list: (value, text) in two groups."""

    versions: list[tuple[str, str]]
    runs: list[tuple[str, str]]


def compare_options(*, collection: Collection) -> Options:
    """Every ranker's most recent versions (the champion marked, and those not evaluated yet), then the
    collection's most recent runs (the run's number first: two runs started in the same minute read the
    same otherwise). Two queries."""
    evaluated = EvaluationRun.objects.succeeded().filter(ranker_version=OuterRef("pk"))
    versions = []
    per_ranker: dict[int, int] = {}
    for version in (
        RankerVersion.objects.filter(ranker__collection=collection)
        .select_related("ranker")
        .annotate(evaluated=Exists(evaluated))
        .order_by("ranker__name", "ranker_id", "-created_at", "-id")
    ):
        per_ranker[version.ranker_id] = per_ranker.get(version.ranker_id, 0) + 1
        if per_ranker[version.ranker_id] > CHOICE_VERSIONS:
            continue
        notes = []
        if version.ranker.champion_id == version.pk:
            notes.append("champion")
        if not version.evaluated:  # type: ignore[attr-defined]  # the annotation
            notes.append("not evaluated yet")
        text = f"{version.ranker.name} {version.label}" + (f" ({', '.join(notes)})" if notes else "")
        versions.append((f"v{version.pk}", text))
    runs = [
        (str(pk), f"Run {pk} · {created:%Y-%m-%d %H:%M} · {name} {label or ''} · {RunStatus(status).label}")
        for pk, created, name, label, status in EvaluationRun.objects.filter(collection=collection)
        .order_by("-created_at", "-id")
        .values_list("pk", "created_at", "ranker__name", "ranker_version__label", "status")[:CHOICE_RUNS]
    ]
    return Options(versions=versions, runs=runs)
