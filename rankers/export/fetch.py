"""Asking the engine itself for a question's candidates and their feature values (``spec.py``).

So the app ranks an export model with exactly the engine's numbers, never its own re-computation:

- OpenSearch / Elasticsearch: the ranker's own request gives the top ``k`` candidates and their original
  scores; then one search restricted to those ids (``ids`` filter) holds every other feature as a named
  ``should`` query, with ``include_named_queries_score=true`` (OpenSearch 2.13+, Elasticsearch 8.8+):
  each hit's ``matched_queries`` maps a feature's name to its score, the same float as that query alone
  scores the answer (checked against OpenSearch 2.19); a feature the answer does not match is absent: 0.
  The same search is sorted by ``_doc`` with ``track_scores``: each hit's ``sort`` value is its document
  number, and the named scores still come back.
- Solr: one request, the ranker's own with ``fl=id,score,[docid],ef_<name>:query($ef_<name>,0)...`` and
  each feature's query as parameter ``ef_<name>`` (``v=$q``: the question from the ranker's own
  parameter): function-query pseudo-fields, 0 where the feature does not match; ``[docid]`` the document
  number.
- The ``vector`` feature (``spec.py``) the same way, with the question's vector given: the k-NN
  ``knn_score`` script as a named query (OpenSearch), the parameter ``question_vector`` (Solr).

Values are returned as the engine's float32 numbers (the JSON's shortest decimal read back as float32),
so a model evaluated here compares exactly what the engine compares.

The document numbers (Lucene's internal ids, in index order) are how both engines order answers a rescore
or rerank scores equally (Lucene's rescorer sorts by score, then document number; checked on OpenSearch
2.19 and Solr 9.10 with a constant rescore / rerank query), so ``Candidates.ranked`` orders ties as the
engine does: what makes a tree model, whose scores tie often, rank in the app as in the engine. They are
read at no extra request, after the vectors' write (which re-adds answers: new numbers). Within one shard
only: an engine with several shards merges ties by shard first, which its hits do not say, so over an
OpenSearch index of several shards (the search's ``_shards.total``) the numbers are left out and ties keep
the engine's first-stage order; a SolrCloud collection of several shards numbers each shard's documents on
their own, so there the tie order holds per shard.
"""

from __future__ import annotations

import copy
from collections.abc import Collection as Container
from dataclasses import dataclass
from typing import Any

import numpy as np

from rankers.base import RankerError, RankQuery
from rankers.engine import EngineBackend, EngineError, PreparedRequest, lookup, map_hits, prepare
from rankers.engine_config import fill_template
from rankers.export.spec import (
    ORIGINAL,
    QUESTION_VECTOR_PARAM,
    VECTOR,
    ExportEngineDown,
    engine_family,
    opensearch_query,
    query_option,
    question_param,
    solr_query,
    vector_text,
    vector_values,
)


@dataclass(frozen=True)
class Candidates:
    """A question's top candidates, engine order, their feature values (rows x features) and their
    document numbers in the engine (``docs``, int64; None when not known: module docstring)."""

    ids: list[str]
    values: np.ndarray
    docs: np.ndarray | None = None

    def ranked(self, scores: np.ndarray) -> list[str]:
        """The ids by ``scores``, highest first; equal scores by document number, lowest first, as the
        engine's rescorer orders them (module docstring); without document numbers, in the engine's order.
        """
        order = np.arange(len(self.ids)) if self.docs is None else self.docs
        return [self.ids[i] for i in np.lexsort((order, -np.asarray(scores, dtype=np.float64)))]


#: Solr's document transformer of a hit's document number (its ``fl`` field, and the hit's key).
DOCID = "[docid]"


def as_float32(values: Any) -> np.ndarray:
    """Numbers as the engine holds them: float32, widened back to float64 exactly."""
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def _down(exc: RankerError) -> ExportEngineDown:
    return ExportEngineDown(str(exc))


class EngineFeatures:
    """Fetches candidates and features from one engine ranker's engine (its config, validated)."""

    def __init__(
        self,
        *,
        config: dict[str, Any],
        features: list[dict[str, str]],
        known_ids: Container[str] | None = None,
    ) -> None:
        self.config = config
        self.features = features
        self.family = engine_family(config)
        self.backend = EngineBackend(config=config, known_ids=known_ids)

    def close(self) -> None:
        self.backend.close()

    def candidates(self, question: str, k: int, vector: np.ndarray | None = None) -> Candidates:
        """The ranker's top ``k`` for ``question`` with every feature's value (``vector``: the question's,
        for the ``vector`` feature; needed when there is one). ExportEngineDown when the engine fails (its
        reason)."""
        if vector is None and any(f["kind"] == VECTOR for f in self.features):
            raise ValueError("the vector feature needs the question's vector")
        try:
            if self.family == "opensearch":
                return self._opensearch(question, k, vector)
            return self._solr(question, k, vector)
        except RankerError as exc:  # EngineUnavailable (retried first) and EngineError
            raise _down(exc) from None

    def _opensearch(self, question: str, k: int, vector: np.ndarray | None) -> Candidates:
        ranking = self.backend.rank(RankQuery(external_id="", text=question), k)
        ids = ranking.ids
        values = np.zeros((len(ids), len(self.features)))
        if not ids:
            return Candidates(ids=[], values=values)
        body = fill_template(self.config["request"]["body"], question=question, rows=k)
        named = []
        for feature in self.features:
            if feature["kind"] == ORIGINAL:
                continue
            values_of = vector_values(vector) if vector is not None else None
            query = opensearch_query(feature, body.get("query"), question, values_of)
            named.append(query_option(query, "_name", feature["name"]))
        payload = self.backend.fetch(
            PreparedRequest(
                method="POST",
                params=[("include_named_queries_score", "true")],
                form=None,
                body={
                    "size": len(ids),
                    "_source": False,
                    "query": {"bool": {"filter": [{"ids": {"values": ids}}], "should": named}},
                    # Each hit's sort value is its document number; the scores are still computed.
                    "sort": ["_doc"],
                    "track_scores": True,
                },
                has_body=True,
            )
        )
        scores: dict[str, dict[str, float]] = {}
        numbers: dict[str, int] = {}
        for hit in lookup(payload, "hits.hits", "response"):
            matched = hit.get("matched_queries") or {}
            if not isinstance(matched, dict):
                raise EngineError(
                    "the engine lists matched queries without scores: it needs include_named_queries_score "
                    "(OpenSearch 2.13 or later, Elasticsearch 8.8 or later)"
                )
            scores[str(hit["_id"])] = matched
            number = (hit.get("sort") or [None])[0]
            if isinstance(number, int) and not isinstance(number, bool):
                numbers[str(hit["_id"])] = number
        for row, (answer_id, score) in enumerate(ranking.answers):
            matched = scores.get(answer_id, {})
            for column, feature in enumerate(self.features):
                values[row, column] = (
                    score if feature["kind"] == ORIGINAL else matched.get(feature["name"], 0.0)
                )
        shards = (payload.get("_shards") or {}).get("total", 1) if isinstance(payload, dict) else 1
        docs = _numbers(ids, numbers) if shards == 1 else None
        return Candidates(ids=ids, values=as_float32(values), docs=docs)

    def _solr(self, question: str, k: int, vector: np.ndarray | None) -> Candidates:
        where, name = question_param(self.config)
        config = copy.deepcopy(self.config)
        extra: dict[str, str] = {}
        mapping = config["response"]
        fields = [mapping["id"], mapping["score"], DOCID]
        for feature in self.features:
            if feature["kind"] == ORIGINAL:
                continue
            param = f"ef_{feature['name']}"
            extra[param] = solr_query(feature, f"v=${name}")
            fields.append(f"{param}:query(${param},0)")
            if feature["kind"] == VECTOR and vector is not None:
                extra[QUESTION_VECTOR_PARAM] = vector_text(vector)
        config["request"][where] = {**config["request"][where], "fl": ",".join(fields), **extra}
        if QUESTION_VECTOR_PARAM in extra and where == "params":
            # The vector's 384 numbers and a long question pass Jetty's URI limit: a POST form instead.
            request = config["request"]
            request["form"] = {**request.get("form", {}), **request.pop("params")}
            request["method"] = "POST"
        prepared = prepare(config, question=question, rows=k)
        payload = self.backend.fetch(prepared)
        ranking = map_hits(payload, mapping, k=k, known_ids=None)
        hits = lookup(payload, mapping["hits"], "response")
        values = np.zeros((len(ranking.answers), len(self.features)))
        numbers = {
            answer_id: hits[row][DOCID]
            for row, (answer_id, _) in enumerate(ranking.answers)
            if isinstance(hits[row].get(DOCID), int) and not isinstance(hits[row].get(DOCID), bool)
        }
        for row, (_, score) in enumerate(ranking.answers):
            for column, feature in enumerate(self.features):
                if feature["kind"] == ORIGINAL:
                    values[row, column] = score
                else:
                    value = hits[row].get(f"ef_{feature['name']}", 0.0)
                    values[row, column] = float(value) if isinstance(value, int | float) else 0.0
        return Candidates(ids=ranking.ids, values=as_float32(values), docs=_numbers(ranking.ids, numbers))


def _numbers(ids: list[str], numbers: dict[str, int]) -> np.ndarray | None:
    """The document number of each id, or None when the engine did not give every one."""
    if any(answer_id not in numbers for answer_id in ids):
        return None
    return np.array([numbers[answer_id] for answer_id in ids], dtype=np.int64)
