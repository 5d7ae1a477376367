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

An answer the engine does not hold is not written (Solr would create it), and one the app does not know
keeps no vector: its ``vector`` feature is 0. ``VectorsRefused`` says why the engine cannot hold them
(no k-NN plugin, a field of another type, a schema that cannot change...), in the engine's words.
"""

from __future__ import annotations

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


def _in_order(
    held: list[tuple[Any, str]], ids: list[str], vectors: np.ndarray
) -> tuple[list[str], np.ndarray]:
    """The held answers' ids and vectors in the engine's document order (``held``: (its doc number, id)),
    so that re-added they keep their order among equal scores."""
    row = {answer_id: i for i, answer_id in enumerate(ids)}
    ordered = [answer_id for _, answer_id in sorted(held, key=lambda pair: pair[0]) if answer_id in row]
    rows = [row[a] for a in ordered]
    return ordered, vectors[rows] if rows else vectors[:0]


def _floats(vector: np.ndarray) -> list[float]:
    return [float(x) for x in np.asarray(vector, dtype=np.float32)]


def _opensearch(engine: EngineBackend, config: dict[str, Any], ids: list[str], vectors: np.ndarray) -> int:
    index = _base(config["url"])  # .../<index>/_search -> .../<index>
    mappings = engine.fetch(_request("GET", f"{index}/_mapping"))
    found = [
        ((m.get("mappings") or {}).get("properties") or {}).get(VECTOR_FIELD)
        for m in mappings.values()
        if isinstance(m, dict)
    ]
    present = [f for f in found if f is not None]
    if any(f.get("type") != "knn_vector" or f.get("dimension") != DIMENSION for f in present):
        raise VectorsRefused(
            f"the index has a field {VECTOR_FIELD} that is not a knn_vector of {DIMENSION} dimensions"
        )
    if len(present) < len(found) or not found:
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
        try:
            engine.fetch(_request("PUT", f"{index}/_mapping", {"properties": {VECTOR_FIELD: field}}))
        except EngineError as exc:
            raise VectorsRefused(
                f"the engine did not add the knn_vector field {VECTOR_FIELD} (is the k-NN plugin "
                f"installed?): {exc}"
            ) from None
    # The answers the index holds, in its own order (``_doc``): written in that order, they keep it.
    held: list[tuple[Any, str]] = []
    for chunk_ids, _ in _chunks(ids, vectors):
        body = {
            "query": {"ids": {"values": chunk_ids}},
            "sort": ["_doc"],
            "size": len(chunk_ids),
            "_source": False,
        }
        found = engine.fetch(_request("POST", f"{index}/_search", body))
        held += [(hit["sort"][0], str(hit["_id"])) for hit in lookup(found, "hits.hits", "response")]
    ordered, ordered_vectors = _in_order(held, ids, vectors)
    written = 0
    for chunk_ids, chunk in _chunks(ordered, ordered_vectors):
        lines: list[Any] = []
        for answer_id, vector in zip(chunk_ids, chunk, strict=True):
            lines += [{"update": {"_id": answer_id}}, {"doc": {VECTOR_FIELD: _floats(vector)}}]
        result = engine.fetch(_request("POST", f"{index}/_bulk", lines, ndjson=True))
        for item in result.get("items", []):
            outcome = item.get("update", {})
            if outcome.get("status") in (200, 201):
                written += 1
            elif outcome.get("status") != 404:  # gone since
                reason = (outcome.get("error") or {}).get("reason", "")
                raise VectorsRefused(f"the engine refused an answer's vector: {reason}"[:300])
    # An update is a delete and an add: merge into one segment, so the deleted copies go (BM25's statistics,
    # and the engine's own scores, are what they were before the vectors came) and answers with equal
    # scores keep one order (the segment's, the order written here) however the merges went.
    engine.fetch(_request("POST", f"{index}/_forcemerge", params=[("max_num_segments", "1")]))
    engine.fetch(_request("POST", f"{index}/_refresh"))
    return written


def _solr(engine: EngineBackend, config: dict[str, Any], ids: list[str], vectors: np.ndarray) -> int:
    core = _base(config["url"])  # .../solr/<core>/select -> .../solr/<core>
    key = engine.fetch(_request("GET", f"{core}/schema/uniquekey")).get("uniqueKey")
    id_field = config["response"]["id"]
    if key != id_field:
        raise VectorsRefused(
            f"the ranker's answer ids come from the field {id_field!r}, not the core's uniqueKey {key!r}: "
            "the export writes each answer's vector by its uniqueKey"
        )
    try:
        field = engine.fetch(_request("GET", f"{core}/schema/fields/{VECTOR_FIELD}")).get("field")
    except EngineError as exc:
        if exc.status != 404:
            raise
        field = None
    if field is None:
        try:
            engine.fetch(
                _request(
                    "POST",
                    f"{core}/schema",
                    {
                        "add-field-type": {
                            "name": SOLR_TYPE,
                            "class": "solr.DenseVectorField",
                            "vectorDimension": DIMENSION,
                            "similarityFunction": "cosine",
                        },
                        "add-field": {
                            "name": VECTOR_FIELD,
                            "type": SOLR_TYPE,
                            "indexed": True,
                            "stored": True,
                        },
                    },
                )
            )
        except EngineError as exc:
            raise VectorsRefused(
                f"Solr did not add the DenseVectorField {VECTOR_FIELD} with the Schema API: {exc}"
            ) from None
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
    # Only the answers the core holds (an atomic update of another would create it), in its own order
    # (``[docid]``): written in that order, they keep it.
    held: list[tuple[Any, str]] = []
    for chunk_ids, _ in _chunks(ids, vectors):
        found = engine.fetch(
            _request(
                "POST",
                f"{core}/select",
                {
                    "query": "{!terms f=" + key + " v=$ids}",
                    "params": {"ids": ",".join(chunk_ids)},
                    "fields": f"{key},[docid]",
                    "limit": len(chunk_ids),
                },
            )
        )
        held += [(d["[docid]"], str(d[key])) for d in lookup(found, "response.docs", "response")]
    ordered, ordered_vectors = _in_order(held, ids, vectors)
    written = 0
    for chunk_ids, chunk in _chunks(ordered, ordered_vectors):
        docs = [
            {key: answer_id, VECTOR_FIELD: {"set": _floats(vector)}}
            for answer_id, vector in zip(chunk_ids, chunk, strict=True)
        ]
        if docs:
            try:
                engine.fetch(_request("POST", f"{core}/update", docs))
            except EngineError as exc:
                raise VectorsRefused(f"Solr did not take the answers' vectors: {exc}") from None
        written += len(docs)
    engine.fetch(_request("POST", f"{core}/update", {"optimize": {"maxSegments": 1}}))  # as above
    return written


def engine_vectors_write(*, config: dict[str, Any], ids: list[str], vectors: np.ndarray) -> int:
    """Write ``vectors`` (rows: ``ids``' answers) into the engine of a validated engine ranker ``config``
    (module docstring); returns how many answers the engine holds and got one. VectorsRefused when the
    engine cannot hold them; ``rankers.base.RankerError`` when it fails."""
    # A write takes longer than a search (Solr's atomic update reads each answer back, then indexes it):
    # the ranker's search timeout would fail a write the engine completes.
    engine = EngineBackend(config={**config, "timeout": max(float(config["timeout"]), WRITE_TIMEOUT)})
    try:
        if engine_family(config) == "opensearch":
            return _opensearch(engine, config, ids, vectors)
        return _solr(engine, config, ids, vectors)
    finally:
        engine.close()
