"""The implicit judgments, cached under the log's and the collection's state."""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from django.db.models import Max

from corpus.models import Collection
from evaluation.selectors.clicks.judgments import implicit_judgments
from evaluation.selectors.clicks.parameters import (
    ClickParameters,
    ImplicitJudgments,
)
from ubi.models import UbiEvent, UbiQuery

# Cached implicit judgments live this long; they are keyed by the log's and the collection's state, so a
# new event, query, question or answer computes them again.
CLICKS_CACHE_SECONDS = 10 * 60


def implicit_judgments_cached(
    *, collection: Collection, parameters: ClickParameters | None = None
) -> ImplicitJudgments:
    """``implicit_judgments``, cached (``CLICKS_CACHE_SECONDS``) under the newest event and query ids and
    the collection's change markers: a page view then costs those three indexed reads instead of the
    whole log (about 1 s of CPU a 100,000 events: bench/bench_clicks.py)."""
    parameters = parameters or ClickParameters()
    state = (
        UbiEvent.objects.aggregate(last=Max("pk"))["last"],
        UbiQuery.objects.aggregate(last=Max("pk"))["last"],
        # The collection's change markers (corpus.services.collection_changed), not a COUNT and MAX over
        # its answers: a page view must not cost what grows with the collection (issue 37).
        Collection.objects.filter(pk=collection.pk)
        .values_list("questions_version", "answers_version")
        .first(),
    )
    key = (
        "clicks:"
        + hashlib.sha1(repr((collection.pk, collection.slug, parameters, state)).encode()).hexdigest()
    )
    judgments = cache.get(key)
    if judgments is None:
        judgments = implicit_judgments(collection=collection, parameters=parameters)
        cache.set(key, judgments, CLICKS_CACHE_SECONDS)
    return judgments
