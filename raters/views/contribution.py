"""A rater's contribution, the card their dashboard loads with htmx: their ratings in the collection (in
all, in the last seven days, on test questions), the questions the queue keeps for them, and the link
to the next one. The dashboard (the evaluation app, a layer below) shows the counts it can read itself
until this card replaces them."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from corpus.models import Collection
from evaluation.selectors import rater_contribution
from raters.next_task.picking import rater_overview
from raters.views.access import RatingRequest, collection_view


@require_GET
@collection_view()
def rate_contribution(request: RatingRequest, collection: Collection) -> HttpResponse:
    """The card with the questions waiting (htmx); without htmx, the same card on a page of its own."""
    context = {
        "collection": collection,
        "contribution": rater_contribution(user=request.user, collection=collection),
        "overview": rater_overview(collection=collection, rater=request.user),
    }
    if request.htmx:
        return render(request, "raters/contribution.html", context)
    return render(request, "raters/contribution_page.html", context)
