"""Fitting an engine ranker's export model on the training questions, measuring it on the test
questions, and storing it on a version (the package's docstring says what it holds)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np
from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.models import Collection, GainScheme, Split
from rankers.backends import get_backend
from rankers.base import RankerError, RankQuery
from rankers.config import validate_ranker_config
from rankers.embedding import EmbeddingUnavailable
from rankers.engine_config import rerank_settings
from rankers.export.fetch import EngineFeatures
from rankers.export.linear import fit_export_linear, linear_scores
from rankers.export.model import ExportedSearch, export_model, export_name
from rankers.export.render import render
from rankers.export.spec import (
    VECTOR_FIELD,
    ExportEngineDown,
    ExportRefused,
    export_features,
)
from rankers.export.trees import lambdamart_params, predict_trees, trees_from_lightgbm
from rankers.export.vectors import VectorsRefused, collection_vectors, engine_vectors_write
from rankers.fitting import lambdamart_fit
from rankers.fusion import ideal_dcg_from_labels
from rankers.models import Ranker, RankerKind, RankerVersion
from ratings.selectors import complete_question_ids
from trainer.engine_export.questions import _fetch, _gain, _labelled, _mean, _ndcg, _Question
from trainer.export_cost import cost_figures

PARITY_TOLERANCE = 0.005
MIN_QUESTIONS = 10  # as trainer.learner: fewer learnable training questions teach nothing reliable
SEED = 20240601

#: Why a feature of the app's reranker cannot go into the engine (``left_out``).
LEFT_OUT_WHY = {
    "cosine": "semantic similarity needs the app's embedding model; the engine holds no vectors of the "
    "answers (a neural / k-NN plugin and an embedding field would)",
    "propagation": "stars that similar training questions gave the answer: the app's ratings, which the "
    "engine does not have",
    "rm3": "the question expanded from its own top answers (RM3): a query cannot expand itself",
    "engine_rank": "1 / rank in the engine's answers: a rank is not a score a query computes",
}
LEXICAL_WHY = (
    "the app's own {name} over its copy of the answers (its tokenizer and statistics); the export has "
    "the engine's per-field BM25 and phrase scores instead"
)
COVERED = {"engine"}  # the engine's own score: the export's "original"
# The rankings measured on the test questions, by the figure each gives.
RANKINGS = ("ndcg_engine", "ndcg_export_app", "ndcg_export_engine", "ndcg_trees_app", "ndcg_version")

Progress = Callable[[str, float], None]


class ExportMissing(Exception):
    """The version has no export model (trained before exports, not an engine ranker, or it failed)."""


class ExportNotOffered(Exception):
    """The version has an export model, but this format of it would rank worse than the engine alone or
    the version learned nothing: ``str(exc)`` says why."""


def _no_progress(phase: str, fraction: float) -> None:
    pass


def left_out_features(
    version: RankerVersion | None, vectors: dict[str, Any] | None = None
) -> list[dict[str, str]]:
    """The features of the version's reranker that the engine cannot compute, with why (none for a
    version that ranks as the engine does). ``vectors``: the export's (``engine_export_fit``): when the
    engine holds the answers' vectors, the cosine is the export's ``vector`` feature; when it could not
    take them, why."""
    if version is None or not version.uses_model or not version.feature_importances:
        return []
    covered = COVERED | ({"cosine"} if vectors and vectors.get("answers") else set())
    why = dict(LEFT_OUT_WHY)
    if vectors and vectors.get("error"):
        why["cosine"] = (
            f"semantic similarity: the engine could not take the answers' vectors: {vectors['error']}"
        )
    return [
        {"feature": name, "why": why.get(name, LEXICAL_WHY.format(name=name))}
        for name in version.feature_importances
        if name not in covered
    ]


def _engine_vectors(config: dict[str, Any], collection: Collection) -> dict[str, Any]:
    """Write the collection's answer vectors into the ranker's engine (``rankers.export.vectors``):
    ``{"field", "answers": how many the engine holds hold one, "written": how many of them this export
    wrote (the others held it already), "error": why none, "seconds"}``. Never raises: an export without
    vectors is still an export (the engine failing altogether is found by the fetch)."""
    out: dict[str, Any] = {"field": VECTOR_FIELD, "answers": 0, "written": 0, "error": ""}
    began = time.perf_counter()
    try:
        ids, vectors = collection_vectors(collection=collection)
        done = engine_vectors_write(config=config, ids=ids, vectors=vectors)
        out["answers"], out["written"] = done.held, done.written
        if not out["answers"]:
            out["error"] = "the engine holds none of the collection's answers"
    except EmbeddingUnavailable as exc:
        out["error"] = f"the app's embedding model is unavailable: {exc}"
    except (VectorsRefused, RankerError) as exc:
        out["error"] = str(exc)
    out["seconds"] = round(time.perf_counter() - began, 3)
    return out


def _engine_config(ranker: Ranker) -> dict[str, Any]:
    if ranker.kind != RankerKind.ENGINE:
        raise ExportRefused(
            f"ranker {ranker.name!r} is a {ranker.kind} ranker: only an engine ranker (OpenSearch, "
            "Elasticsearch, Solr) has an engine to export into."
        )
    try:
        return validate_ranker_config(kind=ranker.kind, config=ranker.config)
    except ValidationError as exc:
        raise ExportRefused(
            f"ranker {ranker.name!r} has an unusable config: {' '.join(exc.messages)}"
        ) from None


def _fitted(learnable: list[_Question], names: list[str], collection: Collection) -> dict[str, Any]:
    """The linear and tree models of the learnable training questions (``export_model``'s arguments)."""
    k = collection.ndcg_k
    stars = [
        np.array([q.labels.get(a, np.nan) for a in q.candidates.ids], dtype=np.float64) for q in learnable
    ]
    ideal = ideal_dcg_from_labels(
        [_gain(np.array(list(q.labels.values()), dtype=np.float64), collection) for q in learnable], k
    )
    # The linear model's judged-only top k reads rated candidates only, also where an import says that the
    # answers it does not list are incorrect: fitted with those at 0 stars (as the trees below), it scored
    # better on the demo with the vector feature but worse on adi (0.516 against 0.526 on complete
    # judgments) and below the engine alone without the vector feature (0.406 against 0.424 on rated
    # answers, the Solr LTR node): bench/README.md, issue 35 §1 and §3.
    weights, linear_details = fit_export_linear(
        np.vstack([q.candidates.values for q in learnable]),
        _gain(np.concatenate(stars), collection),
        [len(q.candidates.ids) for q in learnable],
        ideal_dcg=ideal,
        k=k,
    )
    # As trainer.learner: the lists to learn from are the rated candidates (unrated: unknown, not 0 stars),
    # and every candidate of a question an import judges with "answers not listed are incorrect" on
    # (unlisted: 0 stars). Rated candidates alone are all relevant when the labels are positive-only, and
    # LambdaMART then learns a single leaf of 0 (issue 35); the unlisted ones at 0 give it the bad answers
    # to tell apart.
    stars = [np.where(np.isnan(s) & q.complete, 0.0, s) for s, q in zip(stars, learnable, strict=True)]
    rated = [~np.isnan(s) for s in stars]
    params = lambdamart_params(len(names))
    booster = lambdamart_fit(
        features=np.vstack([q.candidates.values[m] for q, m in zip(learnable, rated, strict=True)]),
        targets=np.concatenate([s[m] for s, m in zip(stars, rated, strict=True)]),
        groups=[int(m.sum()) for m in rated],
        params=params,
        exponential_gain=collection.gain_scheme == GainScheme.EXPONENTIAL,
        truncation=k,
        seed=SEED,
        feature_names=names,
    )
    trees = trees_from_lightgbm(booster)
    return {
        "weights": weights,
        "linear_details": linear_details,
        "trees": trees,
        "trees_details": {"method": "lambdamart", "params": params, "trees": len(trees)},
    }


def _rankings(
    test: list[_Question],
    model: dict[str, Any],
    *,
    config: dict[str, Any],
    ranker: Ranker,
    version: RankerVersion | None,
    k: int,
    report: Callable[[float], None],
) -> dict[str, list[list[str]]]:
    """Each test question's ranking by the engine alone, the linear model as the app ranks, the exported
    request as the engine runs it, the tree model as the app ranks, and the version itself."""
    fmt = "opensearch-rescore" if model["engine"] == "opensearch" else "solr-rerank"
    exported = ExportedSearch(config, render(model, fmt)["search"]["linear"])
    own = get_backend(ranker, version) if version is not None else None
    weights, trees = model["linear"]["weights"], model["trees"]["trees"]
    out: dict[str, list[list[str]]] = {name: [] for name in RANKINGS}
    try:
        for i, q in enumerate(test):
            query = RankQuery(external_id=q.external_id, text=q.text)
            out["ndcg_engine"].append(q.candidates.ids)
            linear = linear_scores(q.candidates.values, weights)
            out["ndcg_export_app"].append(q.candidates.ranked(linear))
            # The question's vector where the request has {{question_vector}}, as a user sends it.
            out["ndcg_export_engine"].append(exported.ids(q.text, model["window"], q.vector))
            out["ndcg_trees_app"].append(q.candidates.ranked(predict_trees(trees, q.candidates.values)))
            version_ranking = own.rank(query, k) if own is not None else None
            out["ndcg_version"].append(
                version_ranking.ids if version_ranking is not None else q.candidates.ids
            )
            report((i + 1) / max(len(test), 1))
    finally:
        exported.close()
    return out


def engine_export_fit(
    *, ranker: Ranker, version: RankerVersion | None = None, progress: Progress | None = None
) -> dict[str, Any]:
    """The ranker's export model, fitted on the training labels and measured on the test questions
    (module docstring). JSON-able. ``version``: whose own ranking ``cost`` compares with and whose
    reranker's features ``left_out`` lists (None: the engine as it is). ``progress(phase, fraction)``
    hears of the phases export-vectors, export-train, export-fit and export-test.

    Raises ExportRefused (not an engine ranker of a known preset; too few learnable training questions)
    or ExportEngineDown (the engine failed: its reason), both ExportError.
    """
    started = time.perf_counter()
    report = progress or _no_progress
    config = _engine_config(ranker)
    export_features(config)  # refuses a ranker whose fields the export does not know, before any write
    collection = ranker.collection
    report("export-vectors", 0.0)
    vectors = _engine_vectors(config, collection)
    report("export-vectors", 1.0)
    with_vectors = vectors["answers"] > 0
    features = export_features(config, vectors=with_vectors)
    names = [f["name"] for f in features]
    window = rerank_settings(config)[0]
    k = collection.ndcg_k
    fetcher = EngineFeatures(config=config, features=features)
    try:
        report("export-train", 0.0)
        train = _fetch(
            fetcher,
            _labelled(collection, Split.TRAIN),
            window,
            lambda f: report("export-train", f),
            complete_question_ids(collection=collection, split=Split.TRAIN),
            vectors=with_vectors,
        )
        learnable = [q for q in train if any(q.labels.get(a, 0) > 0 for a in q.candidates.ids)]
        if len(learnable) < MIN_QUESTIONS:
            raise ExportRefused(
                f"only {len(learnable)} training questions have a relevant answer among the engine's top "
                f"{window}; the export needs at least {MIN_QUESTIONS}."
            )
        report("export-fit", 0.0)
        model = export_model(
            config=config,
            name=export_name(ranker.pk, version.label if version is not None else None),
            window=window,
            features=features,
            **_fitted(learnable, names, collection),
        )
        report("export-fit", 1.0)
        report("export-test", 0.0)
        test = _fetch(
            fetcher,
            _labelled(collection, Split.TEST),
            window,
            lambda f: report("export-test", f / 2),
            vectors=with_vectors,
        )
        rankings = _rankings(
            test,
            model,
            config=config,
            ranker=ranker,
            version=version,
            k=k,
            report=lambda f: report("export-test", 0.5 + f / 2),
        )
    except RankerError as exc:
        raise ExportEngineDown(str(exc)) from None
    finally:
        fetcher.close()
    labels = [q.labels for q in test]
    per_question = {name: _ndcg(rankings[name], labels, collection) for name in RANKINGS}
    figures = {name: _mean(per_question[name]) for name in RANKINGS}
    app, run, own = figures["ndcg_export_app"], figures["ndcg_export_engine"], figures["ndcg_version"]
    parity = round(abs(app - run), 6) if app is not None and run is not None else None
    model["figures"] = {
        "k": k,
        "window": window,
        "training_questions": len(train),
        "learnable_questions": len(learnable),
        "test_questions": sum(1 for q in test if any(g > 0 for g in q.labels.values())),
        **figures,
        "parity": parity,
        "parity_tolerance": PARITY_TOLERANCE,
        "parity_ok": parity is not None and parity <= PARITY_TOLERANCE,
        "rankings_differing": sum(
            a[:k] != b[:k]
            for a, b in zip(rankings["ndcg_export_app"], rankings["ndcg_export_engine"], strict=True)
        ),
        "version": version.label if version is not None else None,
        "cost": round(own - app, 6) if own is not None and app is not None else None,
        **cost_figures(
            version=rankings["ndcg_version"] if version is not None else None,
            export=rankings["ndcg_export_app"],
            labels=labels,
            k=k,
            per_question=(per_question["ndcg_version"], per_question["ndcg_export_app"]),
        ),
        "seconds": round(time.perf_counter() - started, 3),
    }
    model["left_out"] = left_out_features(version, vectors)
    model["vectors"] = vectors
    return model


# --- stored on a version ----------------------------------------------------------------------------


def version_export_build(*, version: RankerVersion, progress: Progress | None = None) -> dict[str, Any]:
    """Fit and measure the version's export model (``engine_export_fit``) and store it as
    ``version.details["export"]``; returns it. Raises what ``engine_export_fit`` raises (nothing stored)."""
    result = engine_export_fit(ranker=version.ranker, version=version, progress=progress)
    with transaction.atomic():
        locked = RankerVersion.objects.select_for_update().get(pk=version.pk)
        locked.details = {**locked.details, "export": result}
        locked.save(update_fields=["details"])
    version.details = locked.details
    return result


def version_export(*, version: RankerVersion) -> dict[str, Any]:
    """The version's stored export model, or ExportMissing saying why there is none."""
    stored = version.details.get("export") if isinstance(version.details, dict) else None
    if isinstance(stored, dict) and "engine" in stored and "linear" in stored:
        return stored
    if isinstance(stored, dict) and stored.get("error"):
        raise ExportMissing(f"Version {version.label} has no export model: {stored['error']}")
    if version.ranker.kind != RankerKind.ENGINE:
        raise ExportMissing(
            f"Version {version.label} has no export model: only an engine ranker's versions are exported "
            "into their engine."
        )
    raise ExportMissing(
        f"Version {version.label} has no export model: it was made before exports were fitted with each "
        "training; train the ranker again to get one."
    )
