"""The trainer's export page: a collection's ground truth, its ratings and its engine rankers' version
models as download links, beside the import form. Each link is a plain ``href`` to a view that serves the
same bytes as the API and the commands (``ratings.exports.ground_truth_file``, ``ratings_file``; a
version's model is the Rankers page's own download, ``ranker-version-export``).

Access as on the other trainer pages: anonymous users log in first, non-members get 404, raters 403 (the
files hold test labels and name the raters).
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from corpus.models import Collection
from rankers.models import Ranker, RankerKind, RankerVersion
from ratings.exports import (
    EXPORT_SPLITS,
    GROUND_TRUTH_EXPORTS,
    RATING_EXPORTS,
    ExportFile,
    ground_truth_file,
    ratings_file,
)
from trainer.engine_export import format_offers
from trainer.selectors import versions_of
from trainer.views import _managed_collection

# Version models listed per engine ranker (its most recent versions with a model).
VERSIONS_SHOWN = 20
SPLIT_NAMES = {"train": "Training questions", "test": "Test questions", "all": "All questions"}
FORMAT_NAMES = {
    "jsonl": "JSON lines",
    "rnr-csv": "Retrieve and Rank CSV",
    "trec-qrels": "TREC qrels",
    "csv": "CSV",
}
EXPORTS = {"ground-truth": ground_truth_file, "ratings": ratings_file}


def _engine_versions(collection: Collection) -> list[tuple[Ranker, list[tuple[RankerVersion, list[str]]]]]:
    """Each engine ranker with its recent versions that have a model for the engine, and their formats."""
    listed: list[tuple[Ranker, list[tuple[RankerVersion, list[str]]]]] = []
    for ranker in collection.rankers.filter(kind=RankerKind.ENGINE).order_by("name", "id"):
        versions: list[tuple[RankerVersion, list[str]]] = []
        for version in versions_of(ranker=ranker)[: VERSIONS_SHOWN * 3]:
            export = version.details.get("export") if isinstance(version.details, dict) else None
            if isinstance(export, dict) and export.get("linear") and export.get("formats"):
                # Only the formats offered: none that ranks below the engine alone, none of a version
                # that learned nothing (the version page says why).
                offered = [f for f, o in format_offers(model=export, version=version).items() if o.offered]
                if offered:
                    versions.append((version, offered))
            if len(versions) == VERSIONS_SHOWN:
                break
        listed.append((ranker, versions))
    return listed


@login_required
@require_GET
def collection_export(request: HttpRequest, slug: str) -> HttpResponse:
    collection = _managed_collection(request, slug)
    formats = {name: FORMAT_NAMES[name] for name in GROUND_TRUTH_EXPORTS}
    return render(
        request,
        "trainer/collection_export.html",
        {
            "collection": collection,
            "splits": [(split, SPLIT_NAMES[split]) for split in EXPORT_SPLITS],
            "ground_truth_formats": list(formats.items()),
            "rating_formats": [(name, FORMAT_NAMES[name]) for name in RATING_EXPORTS],
            "engine_rankers": _engine_versions(collection),
            "has_other_rankers": collection.rankers.exclude(kind=RankerKind.ENGINE).exists(),
        },
    )


@login_required
@require_GET
def collection_export_file(request: HttpRequest, slug: str, what: str) -> HttpResponse:
    """``what`` (ground-truth or ratings) as a file, ``?format=`` and ``?split=`` as the API takes them."""
    collection = _managed_collection(request, slug)
    if what not in EXPORTS:
        raise Http404("No such export.")
    fmt = request.GET.get("format", "jsonl" if what == "ground-truth" else "csv")
    split = request.GET.get("split", "all")
    try:
        file: ExportFile = EXPORTS[what](collection=collection, fmt=fmt, split=split)
    except ValueError as exc:  # names the field
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    response = HttpResponse(file.text, content_type=f"{file.content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{file.filename}"'
    return response
