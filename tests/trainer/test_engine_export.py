"""Fitting an export model: what it refuses and why, what it leaves out of a version's reranker, and what
the API and pages are told when a version has none. (The fit and its parity against the real engines:
tests/rankers/test_export_real_engines.py.)"""

from __future__ import annotations

import numpy as np
import pytest

from rankers.export.fetch import Candidates
from rankers.models import RankerVersion
from rankers.services import ranker_create
from tests.rankers.engine_support import engine_fixture, es_config  # noqa: F401 - the stand-in engine
from tests.rankers.export_support import opensearch_model
from tests.trainer.api_support import fill
from trainer.engine_export import (
    ExportEngineDown,
    ExportMissing,
    ExportRefused,
    engine_export_fit,
    version_export,
    version_export_render,
)
from trainer.engine_export.fit import _fitted, left_out_features
from trainer.engine_export.questions import _Question

pytestmark = pytest.mark.django_db


def test_engine_export_fit_refuses_a_builtin_ranker(collection):
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")

    with pytest.raises(ExportRefused, match="is a builtin ranker: only an engine ranker"):
        engine_export_fit(ranker=ranker)


def test_engine_export_fit_refuses_a_preset_without_known_fields(collection):
    config = {
        "preset": "custom",
        "url": "http://127.0.0.1:9/answers/_search",
        "request": {"body": {"query": {"match": {"text": "{{question}}"}}}},
        "response": {"hits": "hits.hits", "id": "_id", "score": "_score"},
    }
    ranker = ranker_create(collection=collection, name="Custom", kind="engine", config=config)

    with pytest.raises(ExportRefused, match="the 'custom' preset cannot be exported"):
        engine_export_fit(ranker=ranker)


def test_engine_export_fit_with_the_engine_failing_says_its_reason(collection, rater, engine):
    fill(collection, rater)
    ranker = ranker_create(collection=collection, name="ES", kind="engine", config=es_config(engine.url))
    engine.faults.error_status = 503

    with pytest.raises(ExportEngineDown) as caught:
        engine_export_fit(ranker=ranker)

    assert str(caught.value).startswith(
        f"engine at {engine.url}/answers/_search answered 503 Service Unavailable"
    )
    assert str(caught.value).endswith("(1 attempt)")


def test_left_out_features_are_those_of_the_version_the_engine_cannot_compute(collection):
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")
    version = RankerVersion(
        ranker=ranker,
        label="v2",
        uses_model=True,
        feature_importances={"engine": 0.4, "cosine": 0.3, "bm25_title": 0.1, "propagation": 0.1, "rm3": 0.1},
    )

    left = left_out_features(version)

    assert [item["feature"] for item in left] == ["cosine", "bm25_title", "propagation", "rm3"]
    assert left[0]["why"].startswith("semantic similarity needs the app's embedding model")
    assert left[1]["why"].startswith("the app's own bm25_title over its copy of the answers")
    assert left_out_features(RankerVersion(ranker=ranker, label="v1", uses_model=False)) == []
    assert left_out_features(None) == []


@pytest.mark.parametrize(
    ("kind", "details", "message"),
    [
        ("builtin", {}, "Version v9 has no export model: only an engine ranker's versions are exported"),
        ("engine", {}, "Version v9 has no export model: it was made before exports were fitted"),
        (
            "engine",
            {"export": {"error": "the engine at http://x answered 503"}},
            "Version v9 has no export model: the engine at http://x answered 503",
        ),
    ],
)
def test_version_export_missing_says_why(collection, kind, details, message):
    config = es_config("http://127.0.0.1:9") if kind == "engine" else {}
    ranker = ranker_create(collection=collection, name="R", kind=kind, config=config)
    version = RankerVersion.objects.create(ranker=ranker, label="v9", details=details)

    with pytest.raises(ExportMissing) as caught:
        version_export(version=version)

    assert str(caught.value).startswith(message)


def test_version_export_render_reads_the_stored_model(collection):
    ranker = ranker_create(
        collection=collection, name="R", kind="engine", config=es_config("http://127.0.0.1:9")
    )
    version = RankerVersion.objects.create(ranker=ranker, label="v1", details={"export": opensearch_model()})

    out = version_export_render(version=version, fmt="opensearch-rescore")

    assert (
        out["name"] == "ranktrainer-7-v1" and out["search"]["linear"]["body"]["rescore"]["window_size"] == 50
    )
    with pytest.raises(ValueError, match="its formats are opensearch-rescore, opensearch-ltr"):
        version_export_render(version=version, fmt="solr-ltr")


def test_version_export_render_leaves_out_a_tree_model_of_single_leaves(collection):
    ranker = ranker_create(
        collection=collection, name="R", kind="engine", config=es_config("http://127.0.0.1:9")
    )
    leaves = {"trees": [{"value": 0.0}, {"value": 0.0}], "details": {}}
    version = RankerVersion.objects.create(
        ranker=ranker, label="v1", details={"export": opensearch_model(trees=leaves)}
    )

    out = version_export_render(version=version, fmt="opensearch-ltr")

    assert out["models"]["trees"] == {
        "offered": False,
        "why": "The exported tree model learned nothing: its trees are single leaves (every answer it could "
        "learn from had the same stars), so it ranks in the engine's own order.",
    }
    assert list(out["search"]) == ["linear"] and len(out["requests"]) == 3


def _positive_only(*, complete: bool) -> list[_Question]:
    """12 questions of 30 candidates each; the two the labels list (3 stars) score highest on the second
    feature, and nothing else is rated."""
    rng = np.random.default_rng(7)
    questions = []
    for q in range(12):
        values = rng.random((30, 5))
        values[:2, 1] += 1.0
        ids = [f"q{q}-a{i}" for i in range(30)]
        order = rng.permutation(30)  # the engine's order hides the relevant ones among the others
        questions.append(
            _Question(
                f"q{q}",
                f"question {q}",
                {ids[0]: 3, ids[1]: 3},
                Candidates([ids[i] for i in order], values[order]),
                complete=complete,
            )
        )
    return questions


@pytest.mark.parametrize(("complete", "splits"), [(True, True), (False, False)])
def test_tree_model_on_positive_only_labels_learns_from_an_imports_unlisted_answers(
    collection, complete, splits
):
    """Rated candidates alone are all 3 stars: LambdaMART learns single leaves of 0. On questions an
    imported ground truth judges, its unlisted candidates are 0 stars (as the learner reads them), and
    the trees split on the feature that tells the listed ones apart."""
    names = ["original", "bm25_title", "bm25_text", "phrase_title", "phrase_text"]

    fitted = _fitted(_positive_only(complete=complete), names, collection)

    used = {tree.get("feature") for tree in fitted["trees"]} - {None}
    assert (bool(used), 1 in used) == (splits, splits)
    assert fitted["weights"][1] > 0  # the linear model learns from positive-only labels either way
