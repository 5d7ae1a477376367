"""One version's page (what it learned from, its figures, its verdict against the champion, what it offers
inside the engine), promoting it by hand, and downloading its model for the engine."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from evaluation.selectors import latest_runs_by_version, runs_for_ranker
from rankers.models import RankerVersion
from rankers.selectors import default_ranker
from trainer.engine_export import (
    ExportMissing,
    ExportNotOffered,
    export_offers,
    format_offers,
    learned_nothing,
    version_export_render,
)
from trainer.export_cost import export_cost, served_gain_kept
from trainer.ranker_display import VersionDetails, VersionView, features_of
from trainer.selectors import promotion_check, same_models
from trainer.services import PromotionUnconfirmed, version_promote_by_hand
from trainer.training_explanation import same_model_sentence
from trainer.views_online import online_context
from trainer.views_rankers.access import _managed_collection, _ranker, _see_other

VERSION_RUNS_SHOWN = 5


@login_required
@require_GET
def version_detail(request: HttpRequest, slug: str, ranker_id: int, version_id: int) -> HttpResponse:
    """One version: what it learned from, its figures, its verdict against the champion, Promote."""
    collection = _managed_collection(request, slug)
    ranker = _ranker(collection, ranker_id)
    version = get_object_or_404(
        RankerVersion.objects.select_related("created_by"), pk=version_id, ranker=ranker
    )
    same_as = same_models(ranker=ranker).get(version.pk)
    view = VersionView(
        version=version,
        is_champion=version.pk == ranker.champion_id,
        k=collection.ndcg_k,
        kind=ranker.kind,
        latest_run=latest_runs_by_version(ranker=ranker).get(version.pk),
        same_as=same_as,
    )
    return render(
        request,
        "trainer/ranker_version.html",
        {
            "collection": collection,
            "ranker": ranker,
            "version": version,
            "view": view,
            "comparison": view.comparison,
            # The certainty page and the deciding queue speak of the default ranker's versions only.
            "is_default_ranker": getattr(default_ranker(collection=collection), "pk", None) == ranker.pk,
            "details": VersionDetails.of(version),
            "same_model": same_model_sentence(version=version, same_as=same_as, kind=ranker.kind)
            if same_as
            else "",
            "promotion": promotion_check(version=version),
            "features": features_of(version),
            "runs": list(runs_for_ranker(ranker=ranker).filter(ranker_version=version)[:VERSION_RUNS_SHOWN]),
            **_export_context(version),
            **online_context(collection, ranker, version),
        },
    )


def _export_context(version: RankerVersion) -> dict[str, Any]:
    """What the version page's "Inside the engine" offers: each format with whether it is offered, and why
    a model is not (a version that learned nothing, or a model scoring below the engine alone)."""
    export = version.details.get("export") if isinstance(version.details, dict) else None
    if not (isinstance(export, dict) and export.get("linear")):
        return {
            "export_formats": [],
            "export_refusals": [],
            "export_trees_offered": False,
            "export_cost": None,
            "export_kept": "",
        }
    nothing = learned_nothing(version)
    offers = export_offers(model=export, version=version)
    refusals = (
        [nothing]
        if nothing
        else [offer.why for name, offer in offers.items() if not offer.offered and export.get(name)]
    )
    figures = export.get("figures") or {}
    shown = export_cost(figures)
    return {
        "export_formats": [
            (fmt, offer.offered) for fmt, offer in format_offers(model=export, version=version).items()
        ],
        "export_refusals": refusals,
        "export_trees_offered": offers["trees"].offered,
        "export_cost": shown,
        "export_kept": served_gain_kept(
            figures=figures,
            shown=shown,
            method=version.method,
            importances=version.feature_importances or {},
            left_out=export.get("left_out") or [],
        )
        if offers["linear"].offered
        else "",
    }


@login_required
@require_POST
def version_promote_view(request: HttpRequest, slug: str, ranker_id: int, version_id: int) -> HttpResponse:
    """Make this version the champion by hand (rolling back is promoting an older version).

    A version not measured better than the champion gets a confirmation page first, stating the measured
    difference; its button posts ``confirm=1`` here (a plain form: no JavaScript needed).
    """
    collection = _managed_collection(request, slug)
    ranker = _ranker(collection, ranker_id)
    version = get_object_or_404(RankerVersion, pk=version_id, ranker=ranker)
    user = cast(Any, request.user)
    try:
        version_promote_by_hand(version=version, changed_by=user, confirm=request.POST.get("confirm") == "1")
    except PromotionUnconfirmed as exc:
        return render(
            request,
            "trainer/ranker_promote_confirm.html",
            {"collection": collection, "ranker": ranker, "version": version, "check": exc.check},
        )
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"{version.label} is now the champion of {ranker.name}.")
    return _see_other(reverse("ranker-version", args=[collection.slug, ranker.pk, version.pk]))


@login_required
@require_GET
def version_export_download(
    request: HttpRequest, slug: str, ranker_id: int, version_id: int, fmt: str
) -> HttpResponse:
    """The version's model for its engine in one format (``trainer.engine_export``), as a JSON file."""
    collection = _managed_collection(request, slug)
    ranker = _ranker(collection, ranker_id)
    version = get_object_or_404(RankerVersion.objects.select_related("ranker"), pk=version_id, ranker=ranker)
    try:
        body = version_export_render(version=version, fmt=fmt)
    except (ExportMissing, ValueError) as exc:
        raise Http404(str(exc)) from None
    except ExportNotOffered as exc:
        # A clear refusal, not a file: the version page says the same in words.
        return JsonResponse(
            {"detail": str(exc), "format": fmt, "offered": False, "why": str(exc)}, status=409
        )
    response = JsonResponse(body, json_dumps_params={"indent": 2, "ensure_ascii": False})
    response["Content-Disposition"] = f'attachment; filename="{body["name"]}-{fmt}.json"'
    return response
