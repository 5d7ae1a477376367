"""What every format holds: its header (features, weights, figures) and the engine ranker's own search
request with the model in it (a Solr search carrying the question's vector as a POST form)."""

from __future__ import annotations

import copy
from typing import Any

from rankers.export.spec import VECTOR


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


def _solr_where(model: dict[str, Any]) -> str:
    return model["question_param"][0]


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


def _solr_vector_post(model: dict[str, Any], search: dict[str, Any]) -> dict[str, Any]:
    """A Solr search carrying the question's vector as a POST form, not in the URL: 384 numbers and a long
    question pass Jetty's URI limit (a CISI question answered 414 URI Too Long)."""
    if not any(f["kind"] == VECTOR for f in model["features"]) or "params" not in search:
        return search
    out = {k: v for k, v in search.items() if k != "params"}
    out["method"] = "POST"
    out["form"] = {**search.get("form", {}), **search["params"]}
    return out
