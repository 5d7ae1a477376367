"""What an engine can compute for an exported model: the features, derived from an engine ranker's config.

For the ``opensearch`` and ``elasticsearch`` presets (a ``multi_match`` over ``fields`` in the request
body) and the ``solr`` preset (its ``qf`` fields), each field ``f`` gives two features, after the
engine's own score:

=============  =====================================================  ==========================================
feature        OpenSearch / Elasticsearch query                       Solr query
=============  =====================================================  ==========================================
original       the ranker's own query (the score it ranks by)         the main query's score
bm25_<f>       ``{"match": {f: question}}``: BM25 of field f           ``{!simple qf=f q.operators=WHITESPACE}``
phrase_<f>     ``{"match_phrase": {f: question}}``: the question as   ``{!lucene}{!field f=f v=$q}``: the same
               an exact phrase in f (stop words leave gaps), BM25     phrase query (why the wrapper: below)
vector         ``script_score`` of the k-NN plugin's ``knn_score``        ``{!func}vectorSimilarity(FLOAT32,COSINE,
               script, space_type ``cosinesimil``, over the             ranktrainer_vector,$question_vector)``
               ``knn_vector`` field ``ranktrainer_vector``
=============  =====================================================  ==========================================

``vector`` (when the export could put the answers' vectors in the engine: ``rankers.export.vectors``) is
``(1 + cos(q, a)) / 2`` on both engines, of the app's own unit vectors (``rankers.embedding``): the
question's, which whoever sends the search computes (``QUESTION_VECTOR`` in a rendered request, filled
with the list of its 384 numbers), and the answer's, which the export wrote into the index; 0 for an
answer without one.

The question is always text, never query syntax: ``match`` and ``match_phrase`` analyse it, Solr's
``simple`` parser with only its WHITESPACE operator and the ``field`` parser take it as words (see
``rankers.engine_config`` on why the solr preset is not edismax). A feature the question does not match
is 0, in the engine as here.

A question with no indexable word (``???``, only stop words) analyses to no token: ``match_phrase``
scores 0, but Solr's ``field`` parser gives a null query, and a null query inside ``query($ef_...,0)``
fails the whole request (400 "Missing param ef_phrase_title", Solr 9.10's
``FunctionQParser.parseNestedQuery``). Wrapped as a nested clause of the standard parser
(``{!lucene}{!field ... v=$q}``), a null clause is dropped (Lucene's ``QueryParserBase.addClause``) and
the query is an empty ``BooleanQuery``: it matches nothing, so the feature is 0; any other question
parses to the very ``PhraseQuery`` the bare ``field`` parser gives (one clause is returned as itself), so
the scores are the same. The LTR form (``{!field f=f}${user_query}``) stays bare: the question is
pasted after the local parameters there, and Solr's LTR ``SolrFeature`` (8.11) takes a null query as a
``MatchNoDocsQuery`` itself.

An engine ranker with another preset (``custom``, ``opensearch-hybrid``), or whose query is not a
``multi_match`` / whose parameters have no ``qf``, is refused (``ExportRefused``): the export would not
know what the engine's fields are; so is an OpenSearch ranker whose answer ids are not the ``_id``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np

from rankers.engine_config import QUESTION

#: The presets an export knows, and the engine family whose query language it speaks.
FAMILIES = {"opensearch": "opensearch", "elasticsearch": "opensearch", "solr": "solr"}
ORIGINAL = "original"
VECTOR = "vector"
#: The field the export writes each answer's vector into (``knn_vector`` / ``DenseVectorField``).
VECTOR_FIELD = "ranktrainer_vector"
#: Where the question's vector goes in a rendered request: a JSON string value (OpenSearch: replaced by the
#: list of numbers) or the Solr parameter ``question_vector`` (``[n1,n2,...]``).
QUESTION_VECTOR = "{{question_vector}}"
QUESTION_VECTOR_PARAM = "question_vector"


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


def export_features(config: dict[str, Any], *, vectors: bool = False) -> list[dict[str, str]]:
    """The features an export uses, in column order: ``original``, then ``bm25_<f>`` for each field,
    then ``phrase_<f>`` for each field, then ``vector`` when the engine holds the answers' vectors
    (``vectors``). Each: ``{"name", "kind", "field"?}``."""
    fields = query_fields(config)
    features = [{"name": ORIGINAL, "kind": ORIGINAL}]
    features += [{"name": _name("bm25", f), "kind": "bm25", "field": f} for f in fields]
    features += [{"name": _name("phrase", f), "kind": "phrase", "field": f} for f in fields]
    if vectors:
        features.append({"name": VECTOR, "kind": VECTOR, "field": VECTOR_FIELD})
    names = [f["name"] for f in features]
    if len(set(names)) != len(names):
        raise ExportRefused(f"the ranker's fields give clashing feature names: {names}")
    return features


def opensearch_query(
    feature: dict[str, str], original: Any, text: str, vector: Any = QUESTION_VECTOR
) -> dict[str, Any]:
    """The OpenSearch/Elasticsearch query of one feature for ``text`` (the question, or a template
    placeholder). ``original``: the ranker's own query, already holding ``text``; ``vector``: the
    question's vector (a list of numbers, or the placeholder) for the ``vector`` feature."""
    kind = feature["kind"]
    if kind == ORIGINAL:
        return copy.deepcopy(original)
    if kind == VECTOR:
        script = {
            "source": "knn_score",
            "lang": "knn",
            "params": {"field": feature["field"], "query_value": vector, "space_type": "cosinesimil"},
        }
        return {"script_score": {"query": {"match_all": {}}, "script": script}}
    if kind == "bm25":
        return {"match": {feature["field"]: {"query": text}}}
    if kind == "phrase":
        return {"match_phrase": {feature["field"]: {"query": text}}}
    raise ValueError(f"unknown feature kind {kind!r}")


def query_option(query: dict[str, Any], option: str, value: Any) -> dict[str, Any]:
    """``query`` (one feature's, ``opensearch_query``) with ``option`` (``_name``, ``boost``) set where its
    kind takes it: on the field of a ``match`` / ``match_phrase``, on the ``script_score`` itself."""
    ((kind, inner),) = query.items()
    if kind == "script_score":
        inner[option] = value
    else:
        ((_, settings),) = inner.items()
        settings[option] = value
    return query


def vector_values(vector: Any) -> list[float]:
    """A vector as the numbers a request carries: each float32 as its shortest decimal (read back as
    float32 by the engine, it is the same number)."""
    return [float(str(np.float32(x))) for x in np.asarray(vector, dtype=np.float32)]


def vector_text(vector: Any) -> str:
    """A vector as Solr's vector functions read a constant: ``[n1,n2,...]``."""
    return "[" + ",".join(repr(x) for x in vector_values(vector)) + "]"


def solr_query(feature: dict[str, str], text: str) -> str:
    """The Solr query of one (non-original) feature; ``text`` follows the local parameters, e.g.
    ``v=$q`` inside them or ``${user_query}`` after them (``solr_query(f, "v=$q")`` puts it inside)."""
    kind, field = feature["kind"], feature.get("field", "")
    if kind == VECTOR:  # the question's vector from its own parameter, whatever carries the text
        return f"{{!func}}vectorSimilarity(FLOAT32,COSINE,{field},${QUESTION_VECTOR_PARAM})"
    inside = text.startswith("v=")
    tail = "" if inside else text
    extra = f" {text}" if inside else ""
    if kind == "bm25":
        return f"{{!simple qf={field} q.operators=WHITESPACE{extra}}}{tail}"
    if kind == "phrase":
        if inside:  # never a null query (module docstring)
            return f"{{!lucene}}{{!field f={field}{extra}}}"
        return f"{{!field f={field}}}{tail}"
    raise ValueError(f"the {kind!r} feature has no Solr query of its own")
