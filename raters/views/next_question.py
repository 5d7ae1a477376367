"""The next question to rate: the queue picks it (``raters.next_task``), in the split and mode the rater
asked for, and the rating page of that question follows."""

from __future__ import annotations

from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET

from corpus.models import Collection, Split
from raters.next_task.modes import MODES, next_mode_task
from raters.next_task.picking import next_task
from raters.next_task.table import table_note
from raters.views.access import RatingRequest, collection_view
from raters.views.session import remember_task


def _mode(request: RatingRequest, collection: Collection) -> dict | None:
    """``?mode=decide`` (rate what decides the comparison of ``champion`` and ``challenger``, version ids,
    or the headline) or ``?mode=unsure`` (training questions the ranker is least sure of) stays in this
    rater's session until ``?mode=`` asks for the usual queue again."""
    key = f"rate-mode:{collection.pk}"
    if "mode" in request.GET:
        if request.GET["mode"] in MODES:
            request.session[key] = {
                "mode": request.GET["mode"],
                "champion_id": request.GET.get("champion", ""),
                "challenger_id": request.GET.get("challenger", ""),
            }
        else:
            request.session.pop(key, None)
    return request.session.get(key)


@require_GET
@collection_view()
def rate_next(request: RatingRequest, collection: Collection) -> HttpResponse:
    """Redirect to the most useful question for this rater (``?after=<id>`` passes over that question once).

    ``?split=train`` keeps this rater's queue on training questions until ``?split=`` (all) is asked for:
    the link a trainer follows when training needs more labelled training questions. ``?mode=`` picks a
    queue mode (see ``_mode``); when the mode wants nothing more, the usual queue continues.
    """
    key = f"rate-split:{collection.pk}"
    if "split" in request.GET:
        chosen = request.GET["split"]
        if chosen in (Split.TRAIN, Split.TEST):
            request.session[key] = chosen
        else:
            request.session.pop(key, None)
    split = request.session.get(key, "")
    after = request.GET.get("after", "")
    exclude = [int(after)] if after.isdigit() else []
    mode = _mode(request, collection)
    task = None
    if mode is not None:
        task = next_mode_task(collection=collection, rater=request.user, exclude=exclude, **mode)
        if task is None and exclude:
            task = next_mode_task(collection=collection, rater=request.user, **mode)
    if task is None:
        task = next_task(collection=collection, rater=request.user, exclude=exclude, split=split)
    if task is None and exclude:
        task = next_task(collection=collection, rater=request.user, split=split)
    if task is None:
        return render(
            request,
            "raters/done.html",
            {
                "collection": collection,
                "role": request.collection_role,
                "table_note": table_note(collection=collection),
            },
        )
    remember_task(request, collection, task)
    return redirect("rate-question", slug=collection.slug, question_id=task.question_id)
