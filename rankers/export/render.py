"""The export model (``model.py``) as the files and API calls that put it into the engine.

Each format renders to ``{"format", "engine", "name", "window", "summary", "features", "weights",
"requests": [{"step", "method", "url", "body"?}], "search": {"linear": request, "trees"?: request},
"notes": [...], "left_out": [...], "figures": {...}}``: ``requests`` are applied in order (none for the
plugin-free formats); ``search`` holds the search request that ranks with each model afterwards
(``{"method", "url", "body" | "params" | "form"}``). Every search
request is a template in the engine ranker's own language (``rankers.engine_config``): ``{{question}}``
where the question goes (structurally: a JSON string value or one parameter), ``{{rows}}`` for how many
answers, so it can be pasted as an engine ranker's request here, which is how the tests run it.

- ``opensearch-rescore`` (OpenSearch and Elasticsearch, no plugin): the ranker's own body plus
  ``rescore`` with ``window_size`` K: ``query_weight`` = w_original, ``rescore_query_weight`` 1 and a
  ``bool`` of ``should`` queries, one per other feature with weight > 0, each with ``boost`` w_f. A
  ``bool`` of ``should`` clauses scores the sum of the clauses that match, so the answer's score is
  ``w_original * original + sum_f w_f * x_f``: the linear model.
- ``solr-rerank`` (no plugin): the ranker's own parameters plus ``rq={!rerank reRankQuery=$rqq
  reRankDocs=K reRankWeight=1}`` and ``rqq={!func}sum(product(w_f,query($ef_<f>,0)),...)``, the features
  as parameters ``ef_<f>`` reading the question with ``v=$q``: score = original + the sum (weights
  divided by w_original; with w_original 0, ``reRankOperator=replace``).
- ``opensearch-ltr`` (the OpenSearch Learning to Rank plugin): create the feature store, the featureset
  (one mustache template per feature, ``{{keywords}}`` the question), then the linear model
  (``model/linear``) and the tree model (``model/xgboost+json``, thresholds for ``<``: ``trees.py``);
  search with an ``sltr`` rescore.
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

from rankers.engine_config import QUESTION, ROWS
from rankers.export.spec import (
    ORIGINAL,
    QUESTION_VECTOR,
    QUESTION_VECTOR_PARAM,
    VECTOR,
    VECTOR_FIELD,
    opensearch_query,
    query_option,
    solr_query,
    vector_text,
    vector_values,
)
from rankers.export.trees import solr_trees, xgboost_trees

FORMATS = {
    "opensearch-rescore": "opensearch",
    "opensearch-ltr": "opensearch",
    "solr-rerank": "solr",
    "solr-ltr": "solr",
}
KEYWORDS = "{{keywords}}"
LTR_VECTOR_MARK = "@question_vector@"
SOLR_LTR_QUERY = "${user_query}"


def formats_for(engine: str) -> list[str]:
    """The formats of an export model fitted on ``engine`` (``opensearch`` or ``solr``)."""
    return [name for name, family in FORMATS.items() if family == engine]


def _number(value: float) -> str:
    """A weight as Solr reads it (the float32 it is, as its shortest decimal)."""
    return repr(float(value))


def _base(url: str, depth: int) -> str:
    """``url`` without its last ``depth`` path segments (``.../cranfield/_search`` -> ``...``)."""
    parts = urlsplit(url)
    path = "/".join(parts.path.rstrip("/").split("/")[: -depth or None])
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _weights(model: dict[str, Any]) -> dict[str, float]:
    names = [f["name"] for f in model["features"]]
    return dict(zip(names, model["linear"]["weights"], strict=True))


def _header(model: dict[str, Any], fmt: str, summary: str) -> dict[str, Any]:
    return {
        "format": fmt,
        "engine": model["engine"],
        "name": model["name"],
        "window": model["window"],
        "summary": summary,
        "features": [f["name"] for f in model["features"]],
        "weights": _weights(model),
        "left_out": model.get("left_out", []),
        "figures": model.get("figures", {}),
    }


def _replace(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, list):
        return [_replace(v, old, new) for v in value]
    if isinstance(value, dict):
        return {k: _replace(v, old, new) for k, v in value.items()}
    return value


# --- plain rescore / rerank ------------------------------------------------------------------------------


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


def _solr_where(model: dict[str, Any]) -> str:
    return model["question_param"][0]


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


def uses_vector(model: dict[str, Any]) -> bool:
    """Whether the linear model weighs the ``vector`` feature (its search needs the question's vector)."""
    weights = _weights(model)
    return any(f["kind"] == VECTOR and weights[f["name"]] > 0 for f in model["features"])


def _fill_vector_body(value: Any, vector: Any) -> Any:
    if isinstance(value, dict):
        return {key: _fill_vector_body(item, vector) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill_vector_body(item, vector) for item in value]
    return vector_values(vector) if value == QUESTION_VECTOR else value


def fill_question_vector(search: dict[str, Any], vector: Any) -> dict[str, Any]:
    """A rendered search request (``{"method", "url", "body" | "params" | "form"}``) with the question's
    vector where ``QUESTION_VECTOR`` is: in the body, a JSON string value exactly the placeholder becomes
    the list of numbers (OpenSearch's ``query_value``); a parameter, the text ``[n1,n2,...]`` (Solr's
    ``question_vector``)."""
    out = dict(search)
    if "body" in search:
        out["body"] = _fill_vector_body(search["body"], vector)
    for key in ("params", "form"):
        if isinstance(search.get(key), dict):
            out[key] = {n: vector_text(vector) if v == QUESTION_VECTOR else v for n, v in search[key].items()}
    return out


def _vector_notes(model: dict[str, Any]) -> list[str]:
    if not uses_vector(model):
        return []
    where = (
        f"the script's query_value ({QUESTION_VECTOR}: replace the string by the list of numbers)"
        if model["engine"] == "opensearch"
        else f"the parameter {QUESTION_VECTOR_PARAM} ({QUESTION_VECTOR}: replace it by [n1,n2,...])"
    )
    return [
        f"The question's vector goes where {where}: its 384 numbers from the app's embedding model, which "
        "wrote the answers' vectors into the field " + VECTOR_FIELD + ". Compute it when you send the "
        'search, with the same model: POST {"text": question} to a ranker server\'s /encode (manage.py '
        'ranker_server), or see docs/rankers.md, "The question\'s vector". The engine cannot compute it: it '
        "holds the answers' vectors, not the model.",
        "Answers added to the index after the export have no vector (their vector feature is 0) until the "
        "export is built again.",
    ]


def _search_request(model: dict[str, Any], *, body: Any = None, params: Any = None) -> dict[str, Any]:
    """A search request: the ranker's method, URL and parameters, with this body or these (Solr)
    parameters in place of its own."""
    request = model["request"]
    out: dict[str, Any] = {"method": request["method"], "url": model["url"]}
    for key in ("params", "form", "body"):
        if key in request:
            out[key] = copy.deepcopy(request[key])
    if body is not None:
        out["body"] = body
    if params is not None:
        out[_solr_where(model)] = params
    return out


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


def _solr_vector_post(model: dict[str, Any], search: dict[str, Any]) -> dict[str, Any]:
    """A Solr search carrying the question's vector as a POST form, not in the URL: 384 numbers and a long
    question pass Jetty's URI limit (a CISI question answered 414 URI Too Long)."""
    if not any(f["kind"] == VECTOR for f in model["features"]) or "params" not in search:
        return search
    out = {k: v for k, v in search.items() if k != "params"}
    out["method"] = "POST"
    out["form"] = {**search.get("form", {}), **search["params"]}
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


# --- Learning to Rank plugins ----------------------------------------------------------------------------


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


RENDERERS = {
    "opensearch-rescore": render_opensearch_rescore,
    "opensearch-ltr": render_opensearch_ltr,
    "solr-rerank": render_solr_rerank,
    "solr-ltr": render_solr_ltr,
}


def render(model: dict[str, Any], fmt: str) -> dict[str, Any]:
    """The export model in format ``fmt``; ValueError for an unknown format or one of another engine."""
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of {', '.join(FORMATS)}, not {fmt[:40]!r}.")
    if FORMATS[fmt] != model["engine"]:
        raise ValueError(
            f"this export model was fitted on {model['engine']}'s features; its formats are "
            f"{', '.join(formats_for(model['engine']))}, not {fmt!r}."
        )
    return RENDERERS[fmt](model)
