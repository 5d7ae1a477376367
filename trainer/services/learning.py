"""Learning a new version of a ranker from its training labels (``trainer.learner``), and for an engine
ranker fitting the version's export into its engine."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User
from django.db import transaction

from rankers.backends import service_backend
from rankers.config import validate_ranker_config
from rankers.engine_config import rerank_settings
from rankers.fitting import model_file_write, rated_file_write
from rankers.index import load_index
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.services import next_version_label
from trainer.engine_export import ExportError, version_export_build
from trainer.learner import BM25_STAGE, engine_stage, train

from .service_versions import service_version_ensure

Progress = Callable[[str, float], None]


def _no_progress(phase: str, fraction: float) -> None:
    pass


# The export's steps, each in its own slice of the training's fit phase (the learner's own fit before
# them): reporting each step's 0–1 as the phase's 0–1 sent the bar back at every step. The slices follow
# the time each takes: reading the engine's top answers for every training question, then for every test
# question and ranking them twice (by the app and by the engine); the fit itself is quick. Writing the
# answers' vectors into the engine comes first.
EXPORT_SLICES = {
    "export-vectors": (0.0, 0.1),
    "export-train": (0.1, 0.5),
    "export-fit": (0.5, 0.6),
    "export-test": (0.6, 1.0),
}


def export_progress(progress: Progress) -> Progress:
    """The export's ``progress(phase, fraction)`` reported as the training's fit phase (EXPORT_SLICES)."""

    def report(phase: str, fraction: float) -> None:
        start, end = EXPORT_SLICES[phase]
        progress("fit", round(start + (end - start) * min(max(fraction, 0.0), 1.0), 6))

    return report


def ranker_train(
    *, ranker: Ranker, created_by: User | None = None, progress: Progress = _no_progress
) -> RankerVersion:
    """Learn a new version of a ranker from the current labels of its TRAINING questions.

    A builtin ranker reranks its BM25 candidates; an engine or http ranker reranks its service's top
    ``candidates`` answers (default 50, the same at ranking), and its first version is the service as
    it is (made and promoted here when it has no champion), so training has something to beat.
    Cross-validation chooses among the candidates (see ``trainer.learner``) and every candidate's
    figures are recorded on the version. The version is not evaluated or promoted here. An engine that
    fails raises its RankerError (the training fails with the engine's reason).
    """
    config = validate_ranker_config(kind=ranker.kind, config=ranker.config)
    collection = ranker.collection
    # Training reads and computes for seconds; only the version row is written in a transaction.
    index = load_index(collection=collection)
    if ranker.kind == RankerKind.BUILTIN:
        first_stage, depth = BM25_STAGE, config["candidates"]
    else:
        service_version_ensure(ranker=ranker)
        first_stage, depth = engine_stage(service_backend(ranker, config)), rerank_settings(config)[0]
    result = train(
        collection=collection, index=index, candidates=depth, progress=progress, first_stage=first_stage
    )
    with transaction.atomic():
        Ranker.objects.select_for_update().filter(pk=ranker.pk).first()  # serialise label numbering
        label = next_version_label(ranker)
        signals = list((result.params or {}).get("signals", []))
        model_file = (
            model_file_write(
                ranker_id=ranker.pk,
                label=label,
                model_text=result.model_text,
                params=result.params,
                signals=signals,
            )
            if result.model_text
            else ""
        )
        if result.rated is not None:
            result.details["rated_file"] = rated_file_write(
                ranker_id=ranker.pk, label=label, rated=result.rated, answer_ids=index.ids
            )
        version = RankerVersion.objects.create(
            ranker=ranker,
            label=label,
            notes="Trained by Rank Trainer.",
            label_count=result.label_count,
            feature_importances=result.feature_importances,
            model_file=model_file,
            cv_ndcg_model=result.cv_ndcg_model,
            cv_ndcg_bm25=result.cv_ndcg_bm25,
            uses_model=result.uses_model,
            method=result.method,
            details={**result.details, "params": result.params, "question_count": result.question_count},
            created_by=created_by,
        )
    if ranker.kind == RankerKind.ENGINE:
        _export_fit(version, progress)
    return version


def _export_fit(version: RankerVersion, progress: Progress) -> None:
    """Fit the engine ranker's export model with the version (``trainer.engine_export``); when it cannot
    be fitted (a custom preset, too few learnable questions, the engine failing), the version keeps the
    reason, shown where the export would be: the reranker itself stands without it."""
    try:
        version_export_build(version=version, progress=export_progress(progress))
    except ExportError as exc:
        with transaction.atomic():
            locked = RankerVersion.objects.select_for_update().get(pk=version.pk)
            locked.details = {**locked.details, "export": {"error": str(exc)}}
            locked.save(update_fields=["details"])
        version.details = locked.details
