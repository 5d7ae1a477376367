"""The export model: one JSON-able dict every format renders from (``render/``).

::

    {"engine": "opensearch" | "solr", "preset": ..., "name": "ranktrainer-7-v3",
     "url": the ranker's search URL, "request": its request template without headers (no secrets),
     "question_param": ["params" | "form", "q"] (Solr), "window": K,
     "features": [{"name", "kind", "field"?}, ...]                              (spec.py)
     "linear": {"weights": [w_f, ...], "details": {...}},                       (linear.py)
     "trees": {"trees": [neutral tree, ...], "details": {...}} | None,          (trees.py)
     "left_out": [{"feature", "why"}, ...], "figures": {...}, "formats": [...]}

``left_out`` and ``figures`` are the caller's (what the app's own reranker uses that the engine cannot
compute, and what the export scores: ``trainer.engine_export``).
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any

import numpy as np

from rankers.base import RankQuery
from rankers.engine import EngineBackend, map_hits, prepare
from rankers.export.render import fill_question_vector, formats_for
from rankers.export.spec import QUESTION_VECTOR, engine_family, question_param

EXPORT_MODEL_VERSION = 1


def export_name(ranker_id: int, label: str | None) -> str:
    """A name for the featureset, feature store and models: ``ranktrainer-<ranker>[-<version label>]``,
    letters, digits, ``-`` and ``_`` only."""
    tail = f"-{label}" if label else ""
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"ranktrainer-{ranker_id}{tail}")


def export_model(
    *,
    config: dict[str, Any],
    name: str,
    window: int,
    features: list[dict[str, str]],
    weights: list[float],
    linear_details: dict[str, Any],
    trees: list[dict[str, Any]] | None,
    trees_details: dict[str, Any] | None,
) -> dict[str, Any]:
    """The export model of a validated engine config (module docstring), without ``left_out`` and
    ``figures``."""
    engine = engine_family(config)
    request = {k: copy.deepcopy(v) for k, v in config["request"].items() if k != "headers"}
    model: dict[str, Any] = {
        "export_model": EXPORT_MODEL_VERSION,
        "engine": engine,
        "preset": config["preset"],
        "name": name,
        "url": config["url"],
        "request": request,
        "window": window,
        "features": copy.deepcopy(features),
        "linear": {"weights": list(weights), "details": linear_details},
        "trees": {"trees": trees, "details": trees_details or {}} if trees is not None else None,
        "left_out": [],
        "figures": {},
        "formats": formats_for(engine),
    }
    if engine == "solr":
        model["question_param"] = list(question_param(config))
    return model


def search_config(config: dict[str, Any], search: dict[str, Any]) -> dict[str, Any]:
    """The engine ranker config that sends a rendered ``search`` request (``render/``) instead of its
    own: same URL, credentials, timeout and response mapping. What the parity check runs."""
    out = copy.deepcopy(config)
    request: dict[str, Any] = {k: copy.deepcopy(search[k]) for k in ("params", "form", "body") if k in search}
    if "headers" in config["request"]:
        request["headers"] = copy.deepcopy(config["request"]["headers"])
    out["request"] = {"method": search["method"], **request}
    return out


class ExportedSearch:
    """A rendered search request (``render/``) sent to the engine as a user sends it: the question where
    ``{{question}}`` is, and, when it has ``{{question_vector}}``, the question's vector there."""

    def __init__(self, config: dict[str, Any], search: dict[str, Any]) -> None:
        self.config = config
        self.search = search
        self.needs_vector = QUESTION_VECTOR in json.dumps(search)
        self.backend = EngineBackend(config=search_config(config, search))

    def ids(self, question: str, k: int, vector: np.ndarray | None = None) -> list[str]:
        """The engine's top ``k`` answer ids for ``question``."""
        if not self.needs_vector:
            return self.backend.rank(RankQuery(external_id="", text=question), k).ids
        if vector is None:
            raise ValueError("this exported search needs the question's vector")
        filled = search_config(self.config, fill_question_vector(self.search, vector))
        payload = self.backend.fetch(prepare(filled, question=question, rows=k))
        return map_hits(payload, filled["response"], k=k, known_ids=None).ids

    def close(self) -> None:
        self.backend.close()
