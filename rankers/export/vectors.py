"""Putting the answers' vectors into the user's engine, for the export's ``vector`` feature (``spec.py``).

The vectors are the app's own (``rankers.semantic``: the embedding of each answer's title and text, the
model of ``rankers.embedding``), of the answers the app knows; the engine gets them in one field,
``VECTOR_FIELD``, through the ranker's own URL, credentials and headers:

- OpenSearch (the k-NN plugin): a ``knn_vector`` field of 384 dimensions added to the index's mapping when
  missing (an index with ``index.knn`` true: an HNSW graph of the Lucene engine, ``cosinesimil``; without
  it, the plugin keeps the vectors for exact scoring only, which is all the ``knn_score`` script needs;
  ``index.knn`` cannot change on an open index), then ``_bulk`` partial updates of the answers the index
  holds, in its own document order (``_doc``), then a merge into one segment that drops the replaced
  copies (``_forcemerge?max_num_segments=1``: BM25's statistics, and so the engine's scores, stay what
  they were) and ``_refresh``.
- Solr: a ``solr.DenseVectorField`` type (384, cosine) and the field, added with the Schema API when
  missing (a managed schema, Solr's default), then atomic updates (``set``; they need the update log, as
  in Solr's default configset) of the answers the core holds, in its document order (``[docid]``), then
  an optimize to one segment (as above).

Written in the engine's own order and merged into one segment, the answers still may change places
among equal scores (an update is a delete and an add; OpenSearch's periodic refresh cuts the writes into
segments that the merge orders by size): on the demo the engine alone moved by 0.0001-0.0014 NDCG@10.

Written once: each answer's vector goes with its signature (``signature``: a hash of the vector's 384
float32 numbers, so of the model and the answer's text) into a second field, ``SIGNATURE_FIELD`` (a
``keyword`` / ``StrField`` stored only, added beside the vector field), read back with the ids the write
reads anyway; an answer whose signature in the engine is this vector's is not written again, and when
none is written there is no merge either. A second export of the same answers writes nothing; an answer
whose text (so vector) changed, one the index lost its fields for (re-indexed from the user's own
source), and one added since are written. A signature per answer, not one per index (the mapping's
``_meta``, a marker): it says what each document holds, which a user re-indexing documents cannot leave
stale, and it lets a write add only what is missing or changed. What is rewritten moves after the
others among equal scores (it is re-added; the rest stays where it was).

An answer the engine does not hold is not written (Solr would create it), and one the app does not know
keeps no vector: its ``vector`` feature is 0. ``VectorsRefused`` says why the engine cannot hold them
(no k-NN plugin, a field of another type, a schema that cannot change...), in the engine's words.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from corpus.models import Collection
from rankers.embedding import DIMENSION
from rankers.engine import EngineBackend, EngineError, PreparedRequest, lookup
from rankers.export.spec import VECTOR_FIELD, ExportError, engine_family
from rankers.index import load_index
from rankers.semantic import CandidateVectors, answer_texts

CHUNK = 200  # answers per write request (~1.5 MB of numbers)
WRITE_TIMEOUT = 120.0  # seconds a write request may take
SOLR_TYPE = f"ranktrainer_vector_{DIMENSION}"
#: Each answer's vector's signature (``signature``), written with it: what the engine holds already.
SIGNATURE_FIELD = "ranktrainer_vector_signature"
SOLR_SIGNATURE_TYPE = "ranktrainer_signature"


@dataclass(frozen=True)
class VectorsWritten:
    """``held``: the answers the engine holds that hold their vector now; ``written``: how many of them
    this write wrote (the others held it already)."""

    held: int
    written: int


def signature(vector: np.ndarray) -> str:
    """The signature of one answer's vector: BLAKE2b (128 bits, hex) of its float32 numbers, the very
    numbers the engine stores."""
    return hashlib.blake2b(np.asarray(vector, dtype=np.float32).tobytes(), digest_size=16).hexdigest()


class VectorsRefused(ExportError):
    """The engine cannot hold the answers' vectors: ``str(exc)`` says why (the engine's own words)."""


def collection_vectors(*, collection: Collection) -> tuple[list[str], np.ndarray]:
    """(answer ids, their unit vectors): every answer of the collection, as the app's reranker sees it
    (``CandidateVectors``: the built matrix, or the vectors kept per text, encoding the others).
    Raises ``rankers.embedding.EmbeddingUnavailable`` when the model cannot be loaded."""
    index = load_index(collection=collection)
    vectors = CandidateVectors(index=index, texts=answer_texts(index=index))
    return list(index.ids), np.asarray(vectors.of(np.arange(len(index.ids))), dtype=np.float32)


def _request(method: str, url: str, body: Any = None, *, params: list | None = None, ndjson=False):
    return PreparedRequest(
        method=method,
        params=params or [],
        form=None,
        body=body,
        has_body=body is not None,
        url=url,
        ndjson=ndjson,
    )


def _base(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[0]


def _chunks(ids: list[str], vectors: np.ndarray):
    for start in range(0, len(ids), CHUNK):
        yield ids[start : start + CHUNK], vectors[start : start + CHUNK]


def _to_write(
    held: list[tuple[Any, str, Any]], ids: list[str], vectors: np.ndarray
) -> tuple[int, list[str], np.ndarray]:
    """(how many held answers the app has a vector for, and the ids and vectors of those among them whose
    signature in the engine is not their vector's, in the engine's document order). ``held``: (its doc
    number, id, the signature it holds or None). In that order, re-added, they keep their order among
    equal scores."""
    row = {answer_id: i for i, answer_id in enumerate(ids)}
    known = [(doc, answer_id, sig) for doc, answer_id, sig in held if answer_id in row]
    stale = [
        answer_id
        for _, answer_id, sig in sorted(known, key=lambda entry: entry[0])
        if sig != signature(vectors[row[answer_id]])
    ]
    rows = [row[a] for a in stale]
    return len(known), stale, vectors[rows] if rows else vectors[:0]


def _floats(vector: np.ndarray) -> list[float]:
    return [float(x) for x in np.asarray(vector, dtype=np.float32)]


def _opensearch_fields(engine: EngineBackend, index: str) -> None:
    """The ``knn_vector`` field and the signature's ``keyword`` field, added to the mapping when missing."""
    mappings = engine.fetch(_request("GET", f"{index}/_mapping"))
    properties = [
        (m.get("mappings") or {}).get("properties") or {} for m in mappings.values() if isinstance(m, dict)
    ]
    vector = [p.get(VECTOR_FIELD) for p in properties]
    if any(f.get("type") != "knn_vector" or f.get("dimension") != DIMENSION for f in vector if f is not None):
        raise VectorsRefused(
            f"the index has a field {VECTOR_FIELD} that is not a knn_vector of {DIMENSION} dimensions"
        )
    signature = [p.get(SIGNATURE_FIELD) for p in properties]
    if any(f.get("type") != "keyword" for f in signature if f is not None):
        raise VectorsRefused(f"the index has a field {SIGNATURE_FIELD} that is not a keyword")
    missing: dict[str, Any] = {}
    if None in vector or not properties:
        settings = engine.fetch(_request("GET", f"{index}/_settings/index.knn"))
        knn = bool(settings) and all(
            str(((s.get("settings") or {}).get("index") or {}).get("knn", "")).lower() == "true"
            for s in settings.values()
        )
        field: dict[str, Any] = {"type": "knn_vector", "dimension": DIMENSION}
        if knn:
            field["method"] = {"name": "hnsw", "engine": "lucene", "space_type": "cosinesimil"}
        else:
            field["space_type"] = "cosinesimil"
        missing[VECTOR_FIELD] = field
    if None in signature or not properties:  # kept in _source only: read back, never searched
        missing[SIGNATURE_FIELD] = {"type": "keyword", "index": False, "doc_values": False}
    if missing:
        try:
            engine.fetch(_request("PUT", f"{index}/_mapping", {"properties": missing}))
        except EngineError as exc:
            raise VectorsRefused(
                f"the engine did not add the knn_vector field {VECTOR_FIELD} (is the k-NN plugin "
                f"installed?): {exc}"
            ) from None


def _opensearch(
    engine: EngineBackend, config: dict[str, Any], ids: list[str], vectors: np.ndarray
) -> VectorsWritten:
    index = _base(config["url"])  # .../<index>/_search -> .../<index>
    _opensearch_fields(engine, index)
    # The answers the index holds, in its own order (``_doc``): written in that order, they keep it.
    held: list[tuple[Any, str, Any]] = []
    for chunk_ids, _ in _chunks(ids, vectors):
        body = {
            "query": {"ids": {"values": chunk_ids}},
            "sort": ["_doc"],
            "size": len(chunk_ids),
            "_source": [SIGNATURE_FIELD],
        }
        found = engine.fetch(_request("POST", f"{index}/_search", body))
        held += [
            (hit["sort"][0], str(hit["_id"]), (hit.get("_source") or {}).get(SIGNATURE_FIELD))
            for hit in lookup(found, "hits.hits", "response")
        ]
    known, stale, stale_vectors = _to_write(held, ids, vectors)
    written = gone = 0
    for chunk_ids, chunk in _chunks(stale, stale_vectors):
        lines: list[Any] = []
        for answer_id, vector in zip(chunk_ids, chunk, strict=True):
            doc = {VECTOR_FIELD: _floats(vector), SIGNATURE_FIELD: signature(vector)}
            lines += [{"update": {"_id": answer_id}}, {"doc": doc}]
        result = engine.fetch(_request("POST", f"{index}/_bulk", lines, ndjson=True))
        for item in result.get("items", []):
            outcome = item.get("update", {})
            if outcome.get("status") in (200, 201):
                written += 1
            elif outcome.get("status") == 404:  # gone since
                gone += 1
            else:
                reason = (outcome.get("error") or {}).get("reason", "")
                raise VectorsRefused(f"the engine refused an answer's vector: {reason}"[:300])
    if written:
        # An update is a delete and an add: merge into one segment, so the deleted copies go (BM25's
        # statistics, and the engine's own scores, are what they were before the vectors came) and answers
        # with equal scores keep one order (the segment's, the order written here) however the merges went.
        engine.fetch(_request("POST", f"{index}/_forcemerge", params=[("max_num_segments", "1")]))
        engine.fetch(_request("POST", f"{index}/_refresh"))
    return VectorsWritten(held=known - gone, written=written)


def _solr_field(engine: EngineBackend, core: str, name: str) -> dict[str, Any] | None:
    try:
        return engine.fetch(_request("GET", f"{core}/schema/fields/{name}")).get("field")
    except EngineError as exc:
        if exc.status != 404:
            raise
        return None


def _solr_fields(engine: EngineBackend, core: str) -> None:
    """The ``DenseVectorField`` and the signature's ``StrField`` (stored only), added with the Schema API
    when missing."""
    commands: dict[str, list[dict[str, Any]]] = {"add-field-type": [], "add-field": []}
    field = _solr_field(engine, core, VECTOR_FIELD)
    if field is None:
        commands["add-field-type"].append(
            {
                "name": SOLR_TYPE,
                "class": "solr.DenseVectorField",
                "vectorDimension": DIMENSION,
                "similarityFunction": "cosine",
            }
        )
        commands["add-field"].append(
            {"name": VECTOR_FIELD, "type": SOLR_TYPE, "indexed": True, "stored": True}
        )
    elif field.get("type") != SOLR_TYPE:
        kind = engine.fetch(_request("GET", f"{core}/schema/fieldtypes/{field.get('type')}"))
        about = kind.get("fieldType") or {}
        if (
            about.get("class") not in ("solr.DenseVectorField", "org.apache.solr.schema.DenseVectorField")
            or int(about.get("vectorDimension", 0)) != DIMENSION
        ):
            raise VectorsRefused(
                f"the core has a field {VECTOR_FIELD} that is not a DenseVectorField of {DIMENSION} dimensions"
            )
    if _solr_field(engine, core, SIGNATURE_FIELD) is None:
        try:
            engine.fetch(_request("GET", f"{core}/schema/fieldtypes/{SOLR_SIGNATURE_TYPE}"))
        except EngineError as exc:
            if exc.status != 404:
                raise
            commands["add-field-type"].append({"name": SOLR_SIGNATURE_TYPE, "class": "solr.StrField"})
        commands["add-field"].append(
            {
                "name": SIGNATURE_FIELD,
                "type": SOLR_SIGNATURE_TYPE,
                "indexed": False,
                "stored": True,
                "docValues": False,
            }
        )
    commands = {name: items for name, items in commands.items() if items}
    if commands:
        try:
            engine.fetch(_request("POST", f"{core}/schema", commands))
        except EngineError as exc:
            raise VectorsRefused(
                f"Solr did not add the DenseVectorField {VECTOR_FIELD} with the Schema API: {exc}"
            ) from None


def _solr(
    engine: EngineBackend, config: dict[str, Any], ids: list[str], vectors: np.ndarray
) -> VectorsWritten:
    core = _base(config["url"])  # .../solr/<core>/select -> .../solr/<core>
    key = engine.fetch(_request("GET", f"{core}/schema/uniquekey")).get("uniqueKey")
    id_field = config["response"]["id"]
    if key != id_field:
        raise VectorsRefused(
            f"the ranker's answer ids come from the field {id_field!r}, not the core's uniqueKey {key!r}: "
            "the export writes each answer's vector by its uniqueKey"
        )
    _solr_fields(engine, core)
    # Only the answers the core holds (an atomic update of another would create it), in its own order
    # (``[docid]``): written in that order, they keep it.
    held: list[tuple[Any, str, Any]] = []
    for chunk_ids, _ in _chunks(ids, vectors):
        found = engine.fetch(
            _request(
                "POST",
                f"{core}/select",
                {
                    "query": "{!terms f=" + key + " v=$ids}",
                    "params": {"ids": ",".join(chunk_ids)},
                    "fields": f"{key},[docid],{SIGNATURE_FIELD}",
                    "limit": len(chunk_ids),
                },
            )
        )
        held += [
            (d["[docid]"], str(d[key]), d.get(SIGNATURE_FIELD))
            for d in lookup(found, "response.docs", "response")
        ]
    known, stale, stale_vectors = _to_write(held, ids, vectors)
    for chunk_ids, chunk in _chunks(stale, stale_vectors):
        docs = [
            {
                key: answer_id,
                VECTOR_FIELD: {"set": _floats(vector)},
                SIGNATURE_FIELD: {"set": signature(vector)},
            }
            for answer_id, vector in zip(chunk_ids, chunk, strict=True)
        ]
        try:
            engine.fetch(_request("POST", f"{core}/update", docs))
        except EngineError as exc:
            raise VectorsRefused(f"Solr did not take the answers' vectors: {exc}") from None
    if stale:
        engine.fetch(_request("POST", f"{core}/update", {"optimize": {"maxSegments": 1}}))  # as above
    return VectorsWritten(held=known, written=len(stale))


def engine_vectors_write(*, config: dict[str, Any], ids: list[str], vectors: np.ndarray) -> VectorsWritten:
    """Write ``vectors`` (rows: ``ids``' answers) into the engine of a validated engine ranker ``config``
    (module docstring), those it does not hold already; returns how many answers the engine holds and
    hold their vector now, and how many of them were written. VectorsRefused when the engine cannot hold
    them; ``rankers.base.RankerError`` when it fails."""
    # A write takes longer than a search (Solr's atomic update reads each answer back, then indexes it):
    # the ranker's search timeout would fail a write the engine completes.
    engine = EngineBackend(config={**config, "timeout": max(float(config["timeout"]), WRITE_TIMEOUT)})
    try:
        if engine_family(config) == "opensearch":
            return _opensearch(engine, config, ids, vectors)
        return _solr(engine, config, ids, vectors)
    finally:
        engine.close()
