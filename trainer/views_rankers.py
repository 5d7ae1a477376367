"""Trainer pages for a collection's rankers: champions, versions, champion changes, training with a live
progress block, training settings, and one version's figures with a Promote button.

Access as on the other trainer pages: anonymous users log in first, non-members get 404 (we do not
reveal which collections exist), raters get 403. Every POST redirects (303) back to a page that shows
the outcome, so the pages work without JavaScript; htmx only polls the progress block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_GET, require_POST

from corpus.models import Collection
from corpus.permissions import page_collection
from evaluation.selectors import latest_runs_by_version, runs_for_ranker
from rankers.engine_config import rerank_settings
from rankers.models import ChampionChange, Ranker, RankerVersion
from rankers.online_tests import running_online_test
from rankers.reachability import service_silence
from rankers.selectors import default_ranker
from rankers.services import ranker_training_settings_set
from ratings.models import UNLISTED_INCORRECT_LABEL
from trainer.engine_export import (
    ExportMissing,
    ExportNotOffered,
    export_offers,
    format_offers,
    learned_nothing,
    version_export_render,
)
from trainer.export_cost import export_cost, served_gain_kept
from trainer.forms import TrainingSettingsForm
from trainer.models import Training
from trainer.ranker_display import TrainingView, VersionDetails, VersionView, features_of
from trainer.selectors import (
    Readiness,
    champion_changes,
    latest_succeeded_training,
    latest_training,
    promotion_check,
    same_models,
    training_readiness,
    versions_of,
)
from trainer.services import (
    PromotionUnconfirmed,
    TrainingConflict,
    TrainingRefused,
    TrainingUnavailable,
    training_start,
    version_promote_by_hand,
)
from trainer.training_explanation import TrainingExplanation, same_model_sentence
from trainer.views_online import online_context

VERSION_RUNS_SHOWN = 5
# A ranker that trains by itself every hour gathers many versions: the page lists the most recent ones.
HISTORY_SHOWN = 50


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


@dataclass(frozen=True)
class RankerPanel:
    """One ranker's section of the rankers page."""

    ranker: Ranker
    champion: VersionView | None
    versions: list[VersionView]
    version_count: int
    changes: list[ChampionChange]
    change_count: int
    training: TrainingView | None
    readiness: str  # what the training labels allow, with a link to rate more when too few
    settings_form: TrainingSettingsForm | None
    # Why its engine or service is not answering now ("" when it answers, or builtin): said before Train.
    silence: str = ""
    explanation: TrainingExplanation | None = None  # the latest training that made a version, in words

    @property
    def depth(self) -> int:
        """How many of an engine or http ranker's answers its trained versions rerank."""
        return rerank_settings(self.ranker.config)[0]


def _training_view(training: Training, same: dict[int, RankerVersion], kind: str) -> TrainingView:
    """The training's block, saying first when its version is the same model as an earlier one."""
    version, same_as = training.version, same.get(training.version_id or 0)
    said = same_model_sentence(version=version, same_as=same_as, kind=kind) if version and same_as else ""
    return TrainingView(training, same_model=said)


def _explanation(ranker: Ranker, same: dict[int, RankerVersion], k: int) -> TrainingExplanation | None:
    finished = latest_succeeded_training(ranker=ranker)
    if finished is None or finished.version is None:
        return None
    return TrainingExplanation.of(training=finished, same_as=same.get(finished.version.pk), k=k)


def _panel(collection: Collection, ranker: Ranker, form: TrainingSettingsForm | None = None) -> RankerPanel:
    latest_runs = latest_runs_by_version(ranker=ranker)
    same = same_models(ranker=ranker)

    def view(version: RankerVersion) -> VersionView:
        return VersionView(
            version=version,
            is_champion=version.pk == ranker.champion_id,
            k=collection.ndcg_k,
            kind=ranker.kind,
            latest_run=latest_runs.get(version.pk),
            same_as=same.get(version.pk),
        )

    training = latest_training(ranker=ranker)
    if form is None:
        form = TrainingSettingsForm(
            prefix=f"r{ranker.pk}",
            initial={
                "promotion_policy": ranker.promotion_policy,
                "auto_train_labels": ranker.auto_train_labels,
                "auto_train_hours": ranker.auto_train_hours,
            },
        )
    versions = versions_of(ranker=ranker)
    changes = champion_changes(ranker=ranker)
    return RankerPanel(
        ranker=ranker,
        champion=view(ranker.champion) if ranker.champion else None,
        versions=[view(v) for v in versions[:HISTORY_SHOWN]],
        version_count=versions.count(),
        changes=list(changes[:HISTORY_SHOWN]),
        change_count=changes.count(),
        training=_training_view(training, same, ranker.kind) if training else None,
        readiness=_readiness_html(training_readiness(ranker=ranker))
        if not (training and training.is_active)
        else "",
        settings_form=form,
        silence=service_silence(ranker=ranker),
        explanation=_explanation(ranker, same, collection.ndcg_k),
    )


def _rankers_page(
    collection: Collection, forms: dict[int, TrainingSettingsForm] | None = None
) -> dict[str, Any]:
    forms = forms or {}
    rankers = collection.rankers.select_related("champion").order_by("-is_default", "name")
    return {
        "collection": collection,
        "panels": [_panel(collection, r, forms.get(r.pk)) for r in rankers],
        "online_test": running_online_test(collection=collection),  # its challenger's row says so
    }


@login_required
@require_GET
def rankers_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Every ranker of the collection: champion, versions, champion changes, training and its settings."""
    collection = _managed_collection(request, slug)
    return render(request, "trainer/rankers.html", _rankers_page(collection))


@login_required
@require_POST
def ranker_train(request: HttpRequest, slug: str, ranker_id: int) -> HttpResponse:
    """Start a training of a builtin ranker, then back to the rankers page (which shows its progress)."""
    collection = _managed_collection(request, slug)
    ranker = _ranker(collection, ranker_id)
    try:
        training = training_start(ranker=ranker, created_by=cast(Any, request.user), trigger="ui")
    except TrainingRefused as exc:
        messages.error(request, _readiness_html(exc.readiness))
    except TrainingConflict as exc:
        messages.error(request, str(exc))
    except TrainingUnavailable:
        messages.error(request, "Training could not start: the task queue is not reachable, try again.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(
            request, f"Training of {ranker.name} started (training {training.pk}); its progress shows below."
        )
    return _see_other(_rankers_url(collection))


def _readiness_html(readiness: Readiness) -> str:
    """The readiness message; when short of labels, its last sentence ("Rate 3 more training questions")
    is a real link to the training questions' rating queue."""
    text = readiness.message
    if readiness.ready and readiness.positive_only:
        warning = readiness.positive_only_warning
        head, _, _ = warning.partition(" Two ways out: ")
        enough = text.removesuffix(f" {warning}")
        if readiness.off_imports:
            # "turn on “Answers not listed …” for import 3 (qrels.test)", each import a link to its row.
            imports = format_html_join(
                " and ", '<a href="{}">{}</a>', ((u, n) for n, u in readiness.off_imports)
            )
            way_out = format_html("turn on \u201c{}\u201d for {}", UNLISTED_INCORRECT_LABEL, imports)
        else:
            way_out = format_html('<a href="{}">{}</a>', readiness.import_url, readiness.import_way_out)
        return format_html(
            '{} {} Two ways out: <a href="{}">{}</a>, or {}.',
            enough,
            head,
            readiness.unsure_url,
            readiness.rate_unrated,
            way_out,
        )
    if readiness.ready:
        return text
    head = text.removesuffix(f": {readiness.rate_url}")
    if head != text:
        first, _, last = head.rpartition(". ")
        if first and last:
            return format_html('{}. <a href="{}">{}</a>.', first, readiness.rate_url, last)
    return format_html('{} <a href="{}">Rate training questions</a>.', text, readiness.rate_url)


@login_required
@require_GET
def ranker_training(request: HttpRequest, slug: str, ranker_id: int) -> HttpResponse:
    """The ranker's training progress block (htmx polls it every second while the training runs)."""
    collection = _managed_collection(request, slug)
    ranker = _ranker(collection, ranker_id)
    training = latest_training(ranker=ranker)
    response = render(
        request,
        "trainer/rankers.html#training",
        {
            "collection": collection,
            "ranker": ranker,
            # Polled every second while it runs: the versions are read only once it has finished.
            "training": None
            if training is None
            else TrainingView(training)
            if training.is_active
            else _training_view(training, same_models(ranker=ranker), ranker.kind),
        },
    )
    if (training is None or not training.is_active) and request.GET.get("reload") == "1" and _htmx(request):
        # The page that polled shows the old versions and a disabled button: reload it now it is over.
        response["HX-Refresh"] = "true"
    return response


def _htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))  # django_htmx's middleware sets it


@login_required
@require_POST
def ranker_settings(request: HttpRequest, slug: str, ranker_id: int) -> HttpResponse:
    """Save a ranker's promotion policy and automatic training."""
    collection = _managed_collection(request, slug)
    ranker = _ranker(collection, ranker_id)
    form = TrainingSettingsForm(request.POST, prefix=f"r{ranker.pk}")
    if form.is_valid():
        try:
            ranker_training_settings_set(ranker=ranker, **form.cleaned_data)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            messages.success(request, f"Training settings of {ranker.name} saved.")
            return _see_other(_rankers_url(collection))
    context = _rankers_page(collection, forms={ranker.pk: form})
    return render(request, "trainer/rankers.html", context, status=400)


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
