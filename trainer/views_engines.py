"""Trainer pages for search-engine rankers: add one (a preset fills the request and mapping), change its
settings, and **Try it**: rank one question and see the mapped result, or exactly what failed.

Access as on the other Rankers pages (``views_rankers.access._managed_collection``): anonymous users log
in, non-members get 404, raters 403. Secrets are never put in a page: the authorization header field is
write-only, and request header values show masked (a masked value sent back keeps the stored one).
Try it answers an htmx request with the result block only, and a plain form post with the whole page.
"""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from corpus.models import Collection
from rankers.config import redacted_config
from rankers.engine_config import rerank_settings
from rankers.models import Ranker, RankerKind
from rankers.reachability import service_silence
from rankers.services import ranker_config_update, ranker_create
from rankers.trial import MAX_ROWS, TryResult, check_try_input, ranker_try
from trainer.forms_engines import EngineRankerForm, form_field_of
from trainer.views_rankers.access import _managed_collection, _ranker, _see_other


def _add_errors(form: EngineRankerForm, exc: ValidationError) -> None:
    for key, errors in exc.message_dict.items():
        form.add_error(form_field_of(key), errors)


def _page(
    request: HttpRequest,
    collection: Collection,
    form: EngineRankerForm,
    *,
    ranker: Ranker | None = None,
    result: TryResult | None = None,
    try_error: str = "",
    question: str = "",
    status: int = 200,
) -> HttpResponse:
    return render(
        request,
        "trainer/ranker_engine.html",
        {
            "collection": collection,
            "ranker": ranker,
            "form": form,
            "result": result,
            "try_error": try_error,
            "question": question,
            "rows": min(collection.ndcg_k, MAX_ROWS),
        },
        status=status,
    )


@login_required
@require_http_methods(["GET", "POST"])
def engine_ranker_new(request: HttpRequest, slug: str) -> HttpResponse:
    """Add a search-engine ranker; then its settings page, where Try it is."""
    collection = _managed_collection(request, slug)
    if request.method == "GET":
        return _page(request, collection, EngineRankerForm(initial={"preset": "elasticsearch"}))
    form = EngineRankerForm(request.POST)
    if form.is_valid():
        try:
            ranker = ranker_create(
                collection=collection,
                name=form.cleaned_data["name"],
                kind=RankerKind.ENGINE,
                config=form.config(),
                is_default=form.cleaned_data["is_default"],
            )
        except ValidationError as exc:
            _add_errors(form, exc)
        else:
            _saved(request, ranker, f"{ranker.name} added")
            return _see_other(reverse("ranker-engine", args=[collection.slug, ranker.pk]))
    return _page(request, collection, form, status=400)


def _saved(request: HttpRequest, ranker: Ranker, saved: str) -> None:
    """Say it was saved, and whether the engine answers at the saved URL: saved either way (it may be
    starting), with a warning when it does not, before anyone trains on it."""
    silence = service_silence(ranker=ranker, fresh=True)
    if silence:
        messages.warning(
            request,
            f"{saved}, but the engine is not answering at {ranker.config.get('url', '')}: {silence}. "
            "Start it or correct the URL, then Try it.",
        )
    else:
        messages.success(request, f"{saved}. Try it on a question below.")


def _engine_ranker(collection: Collection, ranker_id: int) -> Ranker:
    ranker = _ranker(collection, ranker_id)
    if ranker.kind != RankerKind.ENGINE:
        raise Http404("Only search-engine rankers have this page.")
    return ranker


def _edit_form(ranker: Ranker, data=None) -> EngineRankerForm:
    shown = redacted_config(ranker.config)
    initial = {
        "preset": shown.get("preset", "custom"),
        "url": shown.get("url", ""),
        "timeout": shown.get("timeout"),
        "retries": shown.get("retries"),
        "candidates": rerank_settings(shown)[0],
        "budget_ms": rerank_settings(shown)[1],
        "request": json.dumps(shown.get("request", {}), indent=2, ensure_ascii=False),
        "response": json.dumps(shown.get("response", {}), indent=2, ensure_ascii=False),
    }
    return EngineRankerForm(
        data, initial=initial, editing=True, has_auth=bool(ranker.config.get("auth_header"))
    )


@login_required
@require_http_methods(["GET", "POST"])
def engine_ranker_edit(request: HttpRequest, slug: str, ranker_id: int) -> HttpResponse:
    """A search-engine ranker's settings (and Try it)."""
    collection = _managed_collection(request, slug)
    ranker = _engine_ranker(collection, ranker_id)
    if request.method == "GET":
        return _page(request, collection, _edit_form(ranker), ranker=ranker)
    form = _edit_form(ranker, request.POST)
    if form.is_valid():
        try:
            ranker = ranker_config_update(ranker=ranker, config=form.config())
        except ValidationError as exc:
            _add_errors(form, exc)
        else:
            _saved(request, ranker, f"Settings of {ranker.name} saved")
            return _see_other(reverse("ranker-engine", args=[collection.slug, ranker.pk]))
    return _page(request, collection, form, ranker=ranker, status=400)


@login_required
@require_POST
def ranker_try_view(request: HttpRequest, slug: str, ranker_id: int) -> HttpResponse:
    """Try it: rank one question with the saved settings; nothing is stored."""
    collection = _managed_collection(request, slug)
    ranker = _engine_ranker(collection, ranker_id)
    question = request.POST.get("question", "")
    result, error = None, ""
    try:
        rows = int(request.POST.get("rows") or collection.ndcg_k)
        question, rows = check_try_input(question=question, rows=rows)
    except ValueError as exc:
        error = (
            str(exc)
            if str(exc).startswith(("question", "rows"))
            else f"rows: a whole number from 1 to {MAX_ROWS}."
        )
    else:
        result = ranker_try(ranker=ranker, question=question, rows=rows)
    context = {"collection": collection, "ranker": ranker, "result": result, "try_error": error}
    if getattr(request, "htmx", False):
        # htmx swaps only 2xx answers: an input error is shown in the block like any other outcome.
        return render(request, "trainer/ranker_engine.html#try-result", context)
    return _page(
        request, collection, _edit_form(ranker), ranker=ranker, result=result, try_error=error,
        question=question, status=400 if error else 200,
    )  # fmt: skip
