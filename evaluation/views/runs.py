"""An evaluation run: starting one, its live progress bar, its page (numbers and every question, worst
first) and its files."""

from __future__ import annotations

import io
from typing import Any, cast

from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST

from corpus.models import Collection
from evaluation import selectors
from evaluation.exports import RUN_EXPORTS, write_run_export
from evaluation.models import EvaluationRun, RunStatus, RunTrigger
from evaluation.services import EvaluationUnavailable, evaluation_start
from evaluation.views.access import collection_page, run_page
from evaluation.views.headline import Headline, change_since_previous
from rankers.models import Ranker, RankerVersion

DRILLDOWN_PAGE = 100


def _htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))  # django_htmx's middleware sets it


@collection_page(manage=True)
@require_POST
def run_start(request: HttpRequest, *, collection: Collection, role: str, ranker_id: int) -> HttpResponse:
    """Start an evaluation of the ranker (``version``: of that version, champion or not; default what the
    ranker ranks with); htmx gets the disabled button and the live progress bar, a plain form a redirect
    to ``next`` when it is a page of this site (the compare page that offered it), else the dashboard."""
    ranker = get_object_or_404(Ranker, pk=ranker_id, collection=collection)
    version = None
    if request.POST.get("version"):
        version_id = request.POST["version"]
        if not version_id.isdigit():
            raise Http404("version: no such version of this ranker.")
        version = get_object_or_404(RankerVersion, pk=int(version_id), ranker=ranker)
    try:
        run = evaluation_start(
            ranker=ranker, ranker_version=version, trigger=RunTrigger.UI, created_by=cast(Any, request.user)
        )
    except EvaluationUnavailable as exc:
        response = render(
            request,
            "evaluation/unavailable.html" if not _htmx(request) else "evaluation/dashboard.html#start-error",
            {"collection": collection, "ranker": ranker, "message": str(exc)},
            status=503,
        )
        if _htmx(request):
            # The message goes under the button, which stays usable.
            response["HX-Retarget"], response["HX-Reswap"] = "#run-progress", "innerHTML"
        return response
    if _htmx(request):
        # The button (disabled while the run is active) and the run's live progress bar.
        return render(
            request,
            "evaluation/dashboard.html#run-control",
            {"collection": collection, "ranker": ranker, "is_trainer": True, "active": run},
        )
    back = request.POST.get("next", "")
    if not (back.startswith("/") and url_has_allowed_host_and_scheme(back, allowed_hosts=None)):
        back = f"{reverse('evaluation:dashboard', args=[collection.slug])}?ranker={ranker.pk}"
    response = HttpResponseRedirect(back)
    response.status_code = 303  # See Other: the browser GETs the dashboard
    return response


@run_page()
@require_GET
def run_progress(request: HttpRequest, *, run: EvaluationRun, role: str) -> HttpResponse:
    """The progress bar of a run (polled by htmx every second until the run has finished)."""
    response = render(request, "evaluation/run.html#progress", {"run": run, "polling": not run.is_finished})
    if run.is_finished and _htmx(request) and request.GET.get("reload") == "1":
        # The page that polled shows stale results: reload it now that the run is over.
        response["HX-Refresh"] = "true"
    return response


@run_page(manage=True)
@require_GET
def run_detail(request: HttpRequest, *, run: EvaluationRun, role: str) -> HttpResponse:
    """A run: status or failure reason, its numbers, and every question worst first (paginated)."""
    page = Paginator(selectors.question_results(run=run), DRILLDOWN_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "evaluation/run.html",
        {
            "run": run,
            "collection": run.collection,
            "headline": Headline(run) if run.status == RunStatus.SUCCEEDED else None,
            "change": change_since_previous(run),
            "page": page,
            "polling": not run.is_finished,
            "unknown": selectors.unknown_ids(run=run),
        },
    )


@run_page(manage=True)
@require_GET
def run_export(request: HttpRequest, *, run: EvaluationRun, role: str, fmt: str) -> HttpResponse:
    """The run as a file: ``trec-run``, ``csv`` or ``jsonl`` (see ``evaluation.exports``); trainers only,
    as the run page (the results carry test labels)."""
    if fmt not in RUN_EXPORTS:
        raise Http404(f"No export format {fmt!r}: trec-run, csv or jsonl.")
    out = io.StringIO()
    write_run_export(fmt, selectors.run_export_rows(run=run), out, run_id=run.pk)
    content_type, extension = RUN_EXPORTS[fmt]
    response = HttpResponse(out.getvalue(), content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{run.collection.slug}-run-{run.pk}.{extension}"'
    return response
