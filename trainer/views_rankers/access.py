"""What every rankers page starts from: the collection a trainer manages (404 to non-members, 403 to
raters), its ranker, and the 303 back to a page that shows the outcome."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse

from corpus.models import Collection
from corpus.permissions import page_collection
from rankers.models import Ranker


def _managed_collection(request: HttpRequest, slug: str) -> Collection:
    """The collection if the user trains it; 404 for non-members, 403 for raters."""
    refusal = "Only trainers of this collection can manage its rankers."
    return page_collection(user=request.user, slug=slug, manage=True, refusal=refusal)[0]


def _ranker(collection: Collection, ranker_id: int) -> Ranker:
    return get_object_or_404(Ranker.objects.select_related("champion"), pk=ranker_id, collection=collection)


def _see_other(url: str) -> HttpResponseRedirect:
    response = HttpResponseRedirect(url)
    response.status_code = 303  # See Other: the browser GETs the page
    return response


def _rankers_url(collection: Collection) -> str:
    # The top of the page, where the message saying what happened is (the ranker is named in it).
    return reverse("rankers", args=[collection.slug])
