"""Small export models written by hand (``rankers.export.model``), for the render, API and page tests."""

from __future__ import annotations

import copy
from typing import Any

from rankers.engine_config import preset_config

FEATURES = [
    {"name": "original", "kind": "original"},
    {"name": "bm25_title", "kind": "bm25", "field": "title"},
    {"name": "bm25_text", "kind": "bm25", "field": "text"},
    {"name": "phrase_title", "kind": "phrase", "field": "title"},
    {"name": "phrase_text", "kind": "phrase", "field": "text"},
]
# One tree: bm25_title <= 1.5 -> (phrase_text <= 0.25 -> -0.5 | 0.75) | 2.0; then a single leaf.
TREES = [
    {
        "feature": 1,
        "threshold": 1.5,
        "left": {"feature": 4, "threshold": 0.25, "left": {"value": -0.5}, "right": {"value": 0.75}},
        "right": {"value": 2.0},
    },
    {"value": 0.125},
]
FIGURES = {
    "k": 10,
    "window": 50,
    "training_questions": 93,
    "learnable_questions": 84,
    "test_questions": 57,
    "ndcg_engine": 0.328133,
    "ndcg_export_app": 0.345,
    "ndcg_export_engine": 0.3451,
    "ndcg_trees_app": 0.33,
    "ndcg_version": 0.39,
    "parity": 0.0001,
    "parity_tolerance": 0.005,
    "parity_ok": True,
    "rankings_differing": 1,
    "version": "v1",
    "cost": 0.045,
    "cost_ci_low": 0.012,
    "cost_ci_high": 0.07,
    "rated_share_version": 0.62,
    "rated_share_export": 0.55,
    "cost_places": 570,
    "cost_unrated": 300,
    "seconds": 1.5,
}
LEFT_OUT = [{"feature": "cosine", "why": "semantic similarity needs the app's embedding model"}]


def opensearch_model(weights: list[float] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "export_model": 1,
        "engine": "opensearch",
        "preset": "opensearch",
        "name": "ranktrainer-7-v1",
        "url": "http://127.0.0.1:9200/answers/_search",
        "request": copy.deepcopy(preset_config("opensearch")["request"]),
        "window": 50,
        "features": copy.deepcopy(FEATURES),
        "linear": {"weights": weights or [1.0, 0.5, 0.0, 2.0, 0.25], "details": {}},
        "trees": {"trees": copy.deepcopy(TREES), "details": {}},
        "left_out": copy.deepcopy(LEFT_OUT),
        "figures": dict(FIGURES),
        "formats": ["opensearch-rescore", "opensearch-ltr"],
        **extra,
    }


def solr_model(weights: list[float] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        **opensearch_model(weights),
        "engine": "solr",
        "preset": "solr",
        "url": "http://127.0.0.1:8983/solr/answers/select",
        "request": copy.deepcopy(preset_config("solr")["request"]),
        "question_param": ["params", "q"],
        "formats": ["solr-rerank", "solr-ltr"],
        **extra,
    }
