"""The rater's home: the collections they belong to, with how far they are in each."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.views import redirect_to_login
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from corpus.models import Collection
from corpus.permissions import can_create_collections, collection_access
from corpus.selectors import collections_for_user
from raters.next_task.picking import Overview, rater_overview
from raters.views.access import RatingRequest
from ratings.models import STAR_WORDS


@dataclass(frozen=True)
class CollectionEntry:
    collection: Collection
    role: str | None
    overview: Overview


@require_GET
def home(request: RatingRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    entries = [
        CollectionEntry(
            collection,
            collection_access(user=request.user, collection=collection).role,
            rater_overview(collection=collection, rater=request.user),
        )
        for collection in collections_for_user(user=request.user)
    ]
    return render(
        request,
        "raters/home.html",
        {
            "entries": entries,
            "can_create": can_create_collections(user=request.user),
            # What the stars mean, in the rating page's words (``STAR_WORDS``), on every collection's card.
            "star_words": sorted(STAR_WORDS.items()),
        },
    )
