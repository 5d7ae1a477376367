"""What an engine can compute for an exported model: the features, derived from an engine ranker's config.

For the ``opensearch`` and ``elasticsearch`` presets (a ``multi_match`` over ``fields`` in the request
body) and the ``solr`` preset (its ``qf`` fields), each field ``f`` gives two features, after the
engine's own score:

=============  =====================================================  ==========================================
feature        OpenSearch / Elasticsearch query                       Solr query
=============  =====================================================  ==========================================
original       the ranker's own query (the score it ranks by)         the main query's score
bm25_<f>       ``{"match": {f: question}}``: BM25 of field f           ``{!simple qf=f q.operators=WHITESPACE}``
phrase_<f>     ``{"match_phrase": {f: question}}``: the question as   ``{!field f=f}``: the same phrase query
               an exact phrase in f (stop words leave gaps), BM25
=============  =====================================================  ==========================================

The question is always text, never query syntax: ``match`` and ``match_phrase`` analyse it, Solr's
``simple`` parser with only its WHITESPACE operator and the ``field`` parser take it as words (see
``rankers.engine_config`` on why the solr preset is not edismax). A feature the question does not match
is 0, in the engine as here.

An engine ranker with another preset (``custom``, ``opensearch-hybrid``), or whose query is not a
``multi_match`` / whose parameters have no ``qf``, is refused (``ExportRefused``): the export would not
know what the engine's fields are; so is an OpenSearch ranker whose answer ids are not the ``_id``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

from rankers.engine_config import QUESTION

#: The presets an export knows, and the engine family whose query language it speaks.
FAMILIES = {"opensearch": "opensearch", "elasticsearch": "opensearch", "solr": "solr"}
ORIGINAL = "original"


class ExportError(Exception):
    """The export model could not be made."""


class ExportRefused(ExportError):
    """This ranker cannot be exported (not an engine ranker of a known preset, too few labels, ...)."""


class ExportEngineDown(ExportError):
    """The engine failed while the export asked it for features (its own reason in the message)."""


def engine_family(config: dict[str, Any]) -> str:
    """``opensearch`` or ``solr`` for a validated engine config; ExportRefused for another preset."""
    preset = config.get("preset", "custom")
    if preset not in FAMILIES:
        raise ExportRefused(
            f"an engine ranker with the {preset!r} preset cannot be exported: the export knows the "
            f"{', '.join(FAMILIES)} presets' queries."
        )
    return FAMILIES[preset]


def _bare(field: str) -> str:
    return field.split("^", 1)[0].strip()


def question_param(config: dict[str, Any]) -> tuple[str, str]:
    """Solr: (``params`` or ``form``, the name of the parameter that is exactly ``{{question}}``)."""
    for where in ("params", "form"):
        for name, value in config["request"].get(where, {}).items():
            if value == QUESTION:
                return where, name
    raise ExportRefused(
        f"the ranker's Solr parameters have none that is exactly {QUESTION}: the export's feature queries "
        "read the question from that parameter (v=$q)."
    )


def query_fields(config: dict[str, Any]) -> list[str]:
    """The fields the ranker's query searches, boosts dropped, in its order."""
    request = config["request"]
    if engine_family(config) == "opensearch":
        if config["response"].get("id") != "_id":
            raise ExportRefused(
                "the ranker's answer ids are not the documents' _id: the export asks for the candidates' "
                "feature values by _id."
            )
        query = (request.get("body") or {}).get("query") if isinstance(request.get("body"), dict) else None
        multi = query.get("multi_match") if isinstance(query, dict) else None
        fields = multi.get("fields") if isinstance(multi, dict) else None
        if not isinstance(fields, list) or not fields or not all(isinstance(f, str) for f in fields):
            raise ExportRefused(
                "the ranker's request body has no query.multi_match.fields: the export needs the fields "
                "its query searches."
            )
    else:
        where, _ = question_param(config)
        qf = request.get(where, {}).get("qf")
        if not isinstance(qf, str) or not qf.split():
            raise ExportRefused(
                "the ranker's Solr parameters have no qf: the export needs the fields it searches."
            )
        fields = qf.split()
    bare = [_bare(f) for f in fields]
    if not all(re.fullmatch(r"[A-Za-z0-9_.\-]+", f) for f in bare):
        raise ExportRefused(f"the ranker's fields {bare} hold characters the export does not quote.")
    return list(dict.fromkeys(bare))


def _name(prefix: str, field: str) -> str:
    return f"{prefix}_{re.sub(r'[^A-Za-z0-9_]', '_', field)}"


def export_features(config: dict[str, Any]) -> list[dict[str, str]]:
    """The features an export uses, in column order: ``original``, then ``bm25_<f>`` for each field,
    then ``phrase_<f>`` for each field. Each: ``{"name", "kind", "field"?}``."""
    fields = query_fields(config)
    features = [{"name": ORIGINAL, "kind": ORIGINAL}]
    features += [{"name": _name("bm25", f), "kind": "bm25", "field": f} for f in fields]
    features += [{"name": _name("phrase", f), "kind": "phrase", "field": f} for f in fields]
    names = [f["name"] for f in features]
    if len(set(names)) != len(names):
        raise ExportRefused(f"the ranker's fields give clashing feature names: {names}")
    return features


def opensearch_query(feature: dict[str, str], original: Any, text: str) -> dict[str, Any]:
    """The OpenSearch/Elasticsearch query of one feature for ``text`` (the question, or a template
    placeholder). ``original``: the ranker's own query, already holding ``text``."""
    kind = feature["kind"]
    if kind == ORIGINAL:
        return copy.deepcopy(original)
    if kind == "bm25":
        return {"match": {feature["field"]: {"query": text}}}
    if kind == "phrase":
        return {"match_phrase": {feature["field"]: {"query": text}}}
    raise ValueError(f"unknown feature kind {kind!r}")


def solr_query(feature: dict[str, str], text: str) -> str:
    """The Solr query of one (non-original) feature; ``text`` follows the local parameters, e.g.
    ``v=$q`` inside them or ``${user_query}`` after them (``solr_query(f, "v=$q")`` puts it inside)."""
    kind, field = feature["kind"], feature.get("field", "")
    inside = text.startswith("v=")
    tail = "" if inside else text
    extra = f" {text}" if inside else ""
    if kind == "bm25":
        return f"{{!simple qf={field} q.operators=WHITESPACE{extra}}}{tail}"
    if kind == "phrase":
        return f"{{!field f={field}{extra}}}{tail}"
    raise ValueError(f"the {kind!r} feature has no Solr query of its own")
