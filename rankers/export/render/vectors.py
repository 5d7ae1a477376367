"""The question's vector in a rendered search: whether the model needs it, filling it into a search
request, and the notes that say where it goes and how to compute it."""

from __future__ import annotations

from typing import Any

from rankers.export.render.parts import _weights
from rankers.export.spec import (
    QUESTION_VECTOR,
    QUESTION_VECTOR_PARAM,
    VECTOR,
    VECTOR_FIELD,
    vector_text,
    vector_values,
)


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
