"""The Learning to Rank plugins' formats: feature stores, a linear and a tree model, and the searches that
rerank with either.

- ``opensearch-ltr`` (the OpenSearch Learning to Rank plugin): create the feature store, the featureset
  (one mustache template per feature, ``{{keywords}}`` the question), then the linear model
  (``model/linear``) and the tree model (``model/xgboost+json``, thresholds for ``<``:
  ``rankers.export.trees``); search with an ``sltr`` rescore.
- ``solr-ltr`` (Solr's LTR module): the feature store (``OriginalScoreFeature`` and ``SolrFeature``s
  reading ``${user_query}``), a ``LinearModel`` and a ``MultipleAdditiveTreesModel`` (thresholds for
  ``<=``); search with ``rq={!ltr model=... reRankDocs=K efi.user_query=$q}``.

The OpenSearch LTR plugin is not on Maven Central (it ships as a zip from its GitHub releases), and
Solr's LTR module is there only as ``org.apache.solr:solr-ltr`` 8.x: ``solr-ltr`` runs live on a Solr
8.11.4 node (tests/rankers/test_export_solr_ltr.py); ``opensearch-ltr`` is checked against the plugin's
documentation and its tree thresholds with the XGBoost evaluator; the two plugin-free formats run on the
tests' real engines.
"""

from __future__ import annotations

import copy
import json
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from rankers.engine_config import QUESTION
from rankers.export.render.parts import _header, _search_request, _solr_vector_post, _weights
from rankers.export.spec import (
    ORIGINAL,
    QUESTION_VECTOR,
    QUESTION_VECTOR_PARAM,
    VECTOR,
    opensearch_query,
    solr_query,
)
from rankers.export.trees import solr_trees, xgboost_trees

KEYWORDS = "{{keywords}}"
LTR_VECTOR_MARK = "@question_vector@"
SOLR_LTR_QUERY = "${user_query}"


def _base(url: str, depth: int) -> str:
    """``url`` without its last ``depth`` path segments (``.../cranfield/_search`` -> ``...``)."""
    parts = urlsplit(url)
    path = "/".join(parts.path.rstrip("/").split("/")[: -depth or None])
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _replace(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replace(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _replace(v, old, new) for k, v in value.items()}
    return value


def _opensearch_featureset(model: dict[str, Any]) -> dict[str, Any]:
    original = _replace(model["request"]["body"].get("query"), QUESTION, KEYWORDS)
    features = []
    for feature in model["features"]:
        if feature["kind"] == VECTOR:
            # The question's vector is a list: a string template, the list written by mustache's toJson.
            template = json.dumps(opensearch_query(feature, original, KEYWORDS, LTR_VECTOR_MARK)).replace(
                json.dumps(LTR_VECTOR_MARK), "{{#toJson}}question_vector{{/toJson}}"
            )
            features.append(
                {
                    "name": feature["name"],
                    "params": ["keywords", QUESTION_VECTOR_PARAM],
                    "template_language": "mustache",
                    "template": template,
                }
            )
            continue
        features.append(
            {
                "name": feature["name"],
                "params": ["keywords"],
                "template_language": "mustache",
                "template": opensearch_query(feature, original, KEYWORDS),
            }
        )
    return {"featureset": {"name": model["name"], "features": features}}


def _sltr_params(model: dict[str, Any]) -> dict[str, Any]:
    params: dict[str, Any] = {"keywords": QUESTION}
    if any(f["kind"] == VECTOR for f in model["features"]):
        params[QUESTION_VECTOR_PARAM] = QUESTION_VECTOR
    return params


def _ltr_vector_notes(model: dict[str, Any]) -> list[str]:
    if not any(f["kind"] == VECTOR for f in model["features"]):
        return []
    return [
        "The vector feature needs the k-NN plugin too, and the question's vector where "
        f"{QUESTION_VECTOR} is (as for the plain rescore / rerank). Its LTR feature is not run by the app's "
        "tests (no LTR plugin on their nodes); the plain rescore / rerank, with the same features, is.",
    ]


def _ltr_search_body(model: dict[str, Any], model_name: str) -> dict[str, Any]:
    body = copy.deepcopy(model["request"]["body"])
    body["rescore"] = {
        "window_size": model["window"],
        "query": {
            "rescore_query": {"sltr": {"params": _sltr_params(model), "model": model_name}},
            "query_weight": 0.0,
            "rescore_query_weight": 1.0,
        },
    }
    return body


def render_opensearch_ltr(model: dict[str, Any]) -> dict[str, Any]:
    name = model["name"]
    base = _base(model["url"], 2)
    names = [f["name"] for f in model["features"]]
    out = _header(
        model,
        "opensearch-ltr",
        "The OpenSearch Learning to Rank plugin's featureset, a linear model and a tree model, and the "
        "search requests that rescore with either."
        if model.get("trees")
        else "The OpenSearch Learning to Rank plugin's featureset, a linear model, and the search request "
        "that rescores with it.",
    )
    linear_name, trees_name = f"{name}-linear", f"{name}-trees"
    create = f"{base}/_ltr/_featureset/{name}/_createmodel"
    requests = [
        {
            "step": "Create the default feature store (once per cluster).",
            "method": "PUT",
            "url": f"{base}/_ltr",
        },
        {
            "step": "Create the featureset.",
            "method": "POST",
            "url": f"{base}/_ltr/_featureset/{name}",
            "body": _opensearch_featureset(model),
        },
        {
            "step": "Upload the linear model.",
            "method": "POST",
            "url": create,
            "body": {
                "model": {
                    "name": linear_name,
                    "model": {"type": "model/linear", "definition": json.dumps(_weights(model))},
                }
            },
        },
    ]
    search = {"linear": _search_request(model, body=_ltr_search_body(model, linear_name))}
    if model.get("trees"):
        requests.append(
            {
                "step": "Upload the tree model (LambdaMART; XGBoost's JSON, splits left when x < split_condition).",
                "method": "POST",
                "url": create,
                "body": {
                    "model": {
                        "name": trees_name,
                        "model": {
                            "type": "model/xgboost+json",
                            "definition": json.dumps(xgboost_trees(model["trees"]["trees"], names)),
                        },
                    }
                },
            }
        )
        search["trees"] = _search_request(model, body=_ltr_search_body(model, trees_name))
    out["requests"] = requests
    out["search"] = search
    out["notes"] = [
        "Needs the Learning to Rank plugin (opensearch-learning-to-rank-base), installed from its release zip.",
        f"The featureset's templates take the question as the parameter keywords; the search requests put "
        f"it where {QUESTION} is.",
        *_ltr_vector_notes(model),
    ]
    return out


def _solr_feature_store(model: dict[str, Any]) -> list[dict[str, Any]]:
    store = model["name"]
    features = []
    for feature in model["features"]:
        if feature["kind"] == ORIGINAL:
            features.append(
                {
                    "store": store,
                    "name": feature["name"],
                    "class": "org.apache.solr.ltr.feature.OriginalScoreFeature",
                    "params": {},
                }
            )
        else:
            features.append(
                {
                    "store": store,
                    "name": feature["name"],
                    "class": "org.apache.solr.ltr.feature.SolrFeature",
                    "params": {"q": solr_query(feature, SOLR_LTR_QUERY)},
                }
            )
    return features


def render_solr_ltr(model: dict[str, Any]) -> dict[str, Any]:
    store = model["name"]
    core = _base(model["url"], 1)
    names = [f["name"] for f in model["features"]]
    where, question = model["question_param"]
    out = _header(
        model,
        "solr-ltr",
        "Solr's Learning to Rank feature store, a LinearModel and a MultipleAdditiveTreesModel, and the "
        "select parameters that rerank with either."
        if model.get("trees")
        else "Solr's Learning to Rank feature store, a LinearModel, and the select parameters that rerank "
        "with it.",
    )
    linear_name, trees_name = f"{store}-linear", f"{store}-trees"
    features = [{"name": n} for n in names]
    requests = [
        {
            "step": "Upload the feature store.",
            "method": "PUT",
            "url": f"{core}/schema/feature-store",
            "body": _solr_feature_store(model),
        },
        {
            "step": "Upload the linear model.",
            "method": "PUT",
            "url": f"{core}/schema/model-store",
            "body": {
                "store": store,
                "name": linear_name,
                "class": "org.apache.solr.ltr.model.LinearModel",
                "features": features,
                "params": {"weights": _weights(model)},
            },
        },
    ]

    def search(model_name: str) -> dict[str, Any]:
        params = copy.deepcopy(model["request"][where])
        params["rq"] = f"{{!ltr model={model_name} reRankDocs={model['window']} efi.user_query=${question}}}"
        if any(f["kind"] == VECTOR for f in model["features"]):
            params[QUESTION_VECTOR_PARAM] = QUESTION_VECTOR
        return _solr_vector_post(model, _search_request(model, params=params))

    searches = {"linear": search(linear_name)}
    if model.get("trees"):
        requests.append(
            {
                "step": "Upload the tree model (LambdaMART; splits left when x <= threshold).",
                "method": "PUT",
                "url": f"{core}/schema/model-store",
                "body": {
                    "store": store,
                    "name": trees_name,
                    "class": "org.apache.solr.ltr.model.MultipleAdditiveTreesModel",
                    "features": features,
                    "params": {"trees": solr_trees(model["trees"]["trees"], names)},
                },
            }
        )
        searches["trees"] = search(trees_name)
    out["requests"] = requests
    out["search"] = searches
    out["notes"] = [
        "Needs Solr's LTR module enabled for the core (the ltr query parser and the model and feature "
        "stores in solrconfig.xml, see the Solr reference guide's Learning To Rank page).",
        f"The features read the question from the efi parameter user_query, which the rq parameter takes "
        f"from the {question} parameter (efi.user_query=${question}).",
        *_ltr_vector_notes(model),
    ]
    return out
