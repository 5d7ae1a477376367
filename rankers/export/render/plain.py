"""The plugin-free formats: the linear model as the engine's own rescore or rerank query.

- ``opensearch-rescore`` (OpenSearch and Elasticsearch, no plugin): the ranker's own body plus
  ``rescore`` with ``window_size`` K: ``query_weight`` = w_original, ``rescore_query_weight`` 1 and a
  ``bool`` of ``should`` queries, one per other feature with weight > 0, each with ``boost`` w_f. A
  ``bool`` of ``should`` clauses scores the sum of the clauses that match, so the answer's score is
  ``w_original * original + sum_f w_f * x_f``: the linear model.
- ``solr-rerank`` (no plugin): the ranker's own parameters plus ``rq={!rerank reRankQuery=$rqq
  reRankDocs=K reRankWeight=1}`` and ``rqq={!func}sum(product(w_f,query($ef_<f>,0)),...)``, the features
  as parameters ``ef_<f>`` reading the question with ``v=$q``: score = original + the sum (weights
  divided by w_original; with w_original 0, ``reRankOperator=replace``).
"""

from __future__ import annotations

import copy
from typing import Any

from rankers.engine_config import QUESTION, ROWS
from rankers.export.render.parts import _header, _search_request, _solr_vector_post, _weights
from rankers.export.render.vectors import _vector_notes
from rankers.export.spec import (
    ORIGINAL,
    QUESTION_VECTOR,
    QUESTION_VECTOR_PARAM,
    VECTOR,
    opensearch_query,
    query_option,
    solr_query,
)


def _number(value: float) -> str:
    """A weight as Solr reads it (the float32 it is, as its shortest decimal)."""
    return repr(float(value))


def opensearch_rescore_body(model: dict[str, Any]) -> dict[str, Any]:
    """The ranker's request body with the linear model as a ``rescore`` (module docstring)."""
    body = copy.deepcopy(model["request"]["body"])
    weights = _weights(model)
    should = []
    for feature in model["features"]:
        weight = weights[feature["name"]]
        if feature["kind"] == ORIGINAL or weight <= 0:
            continue
        query = opensearch_query(feature, body.get("query"), QUESTION)
        should.append(query_option(query, "boost", weight))
    if should:
        body["rescore"] = {
            "window_size": model["window"],
            "query": {
                "rescore_query": {"bool": {"should": should}},
                "query_weight": weights[ORIGINAL],
                "rescore_query_weight": 1.0,
                "score_mode": "total",
            },
        }
    return body


def solr_rerank_params(model: dict[str, Any]) -> dict[str, Any]:
    """The ranker's Solr parameters with the linear model as ``{!rerank}`` (module docstring)."""
    where, name = model["question_param"]
    params = copy.deepcopy(model["request"][where])
    weights = _weights(model)
    original = weights[ORIGINAL]
    terms = []
    for feature in model["features"]:
        weight = weights[feature["name"]]
        if feature["kind"] == ORIGINAL or weight <= 0:
            continue
        param = f"ef_{feature['name']}"
        params[param] = solr_query(feature, f"v=${name}")
        if feature["kind"] == VECTOR:
            params[QUESTION_VECTOR_PARAM] = QUESTION_VECTOR
        terms.append(f"product({_number(weight / original if original > 0 else weight)},query(${param},0))")
    if terms:
        operator = "" if original > 0 else " reRankOperator=replace"
        params["rq"] = f"{{!rerank reRankQuery=$rqq reRankDocs={model['window']} reRankWeight=1{operator}}}"
        params["rqq"] = "{!func}" + (terms[0] if len(terms) == 1 else f"sum({','.join(terms)})")
    return params


def render_opensearch_rescore(model: dict[str, Any]) -> dict[str, Any]:
    out = _header(
        model,
        "opensearch-rescore",
        f"The search request with the model as a rescore of the top {model['window']} answers; no plugin.",
    )
    out["requests"] = []
    out["search"] = {"linear": _search_request(model, body=opensearch_rescore_body(model))}
    out["notes"] = [
        f"Send it as your search request, with the question where {QUESTION} is and the number of "
        f"answers where {ROWS} is (it is also an engine ranker's request body here).",
        "Features with weight 0 are left out of the rescore query.",
        *_vector_notes(model),
    ]
    return out


def render_solr_rerank(model: dict[str, Any]) -> dict[str, Any]:
    out = _header(
        model,
        "solr-rerank",
        f"The select request with the model as {{!rerank}} of the top {model['window']} answers; no plugin.",
    )
    out["requests"] = []
    out["search"] = {
        "linear": _solr_vector_post(model, _search_request(model, params=solr_rerank_params(model)))
    }
    out["notes"] = [
        f"Send these parameters to your select handler, with the question where {QUESTION} is and the "
        f"number of answers where {ROWS} is (they are also an engine ranker's request here).",
        "Features with weight 0 are left out of the rerank query.",
        *_vector_notes(model),
    ]
    return out
