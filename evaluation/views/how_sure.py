"""The "How sure are we?" page, which htmx also loads into the dashboard (``#certainty`` only)."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from corpus.models import Collection, Role
from evaluation import certainty
from evaluation.views.access import collection_page
from rankers.selectors import default_ranker


@collection_page()
@require_GET
def certainty_page(request: HttpRequest, *, collection: Collection, role: str) -> HttpResponse:
    """The headline's bounds and estimate, P(challenger better), ratings to settle, the link to rate.

    About the default ranker (the one the queue rates for); ``?champion=`` and ``?challenger=`` pick
    versions (trainers pick them with the form on the page)."""
    ranker = default_ranker(collection=collection)
    panel = (
        certainty.panel(
            collection=collection,
            ranker=ranker,
            champion_id=request.GET.get("champion"),
            challenger_id=request.GET.get("challenger"),
        )
        if ranker is not None
        else None
    )
    context = {"collection": collection, "role": role, "is_trainer": role == Role.TRAINER, "panel": panel}
    if request.headers.get("HX-Request") == "true":
        return render(request, "evaluation/certainty.html", context)
    return render(request, "evaluation/certainty_page.html", context)
