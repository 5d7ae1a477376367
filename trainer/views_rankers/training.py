"""Training from the rankers page: start one, its progress block (htmx polls it), and the training
settings (promotion policy, automatic training)."""

from __future__ import annotations

from typing import Any, cast

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET, require_POST

from rankers.services import ranker_training_settings_set
from trainer.forms import TrainingSettingsForm
from trainer.ranker_display import TrainingView
from trainer.selectors import latest_training, same_models
from trainer.services import TrainingConflict, TrainingRefused, TrainingUnavailable, training_start
from trainer.views_rankers.access import _managed_collection, _ranker, _rankers_url, _see_other
from trainer.views_rankers.page import _rankers_page, _readiness_html, _training_view


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
