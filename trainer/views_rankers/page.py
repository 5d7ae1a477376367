"""The rankers page: every ranker of the collection as a panel (champion, versions, champion changes,
training and its settings), and what the training labels allow, linked to the queue that rates more."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_GET

from corpus.models import Collection
from evaluation.selectors import latest_runs_by_version
from rankers.engine_config import rerank_settings
from rankers.models import ChampionChange, Ranker, RankerVersion
from rankers.online_tests import running_online_test
from rankers.reachability import service_silence
from ratings.models import UNLISTED_INCORRECT_LABEL
from trainer.forms import TrainingSettingsForm
from trainer.models import Training
from trainer.ranker_display import TrainingView, VersionView
from trainer.selectors import (
    Readiness,
    champion_changes,
    latest_succeeded_training,
    latest_training,
    same_models,
    training_readiness,
    versions_of,
)
from trainer.training_explanation import TrainingExplanation, same_model_sentence
from trainer.views_rankers.access import _managed_collection

# A ranker that trains by itself every hour gathers many versions: the page lists the most recent ones.
HISTORY_SHOWN = 50


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
