"""The first stage: where a question's candidates come from (BM25, or an engine or ranker service)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from corpus.models import Question
from rankers.base import RankerBackend, RankQuery
from rankers.builtin import bm25_candidates
from rankers.index import CollectionIndex
from rankers.signals import ENGINE


@dataclass(frozen=True)
class FirstStage:
    """Where a question's candidates come from, best first: BM25 over the app's copy of the answers
    (``name`` "bm25"), or an engine or ranker service (``name`` "engine": its top answers, with its
    scores as the ``engine`` signal). The learner's untrained candidates are this order and the fusion
    of its score with the cosine; the trained ones rerank it."""

    name: str
    title: str  # as a sentence names it: "BM25", "the engine"
    pool: str  # its candidates in a sentence: "BM25 candidates", "the engine's top answers"
    backend: RankerBackend | None = None  # the engine (None for BM25)

    @property
    def signals(self) -> tuple[str, ...]:
        """The signals only this first stage has."""
        return ENGINE if self.name == "engine" else ()

    def candidates(
        self, index: CollectionIndex, question: Question, terms: list[str], depth: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positions in first-stage order, title + body BM25 of every answer, first-stage score of each
        candidate). An engine's answers the collection does not know are left out: nobody can rate them.
        Raises RankerError / RankerUnavailable when the engine fails."""
        if self.backend is None:
            positions, bm25 = bm25_candidates(index, terms, depth)
            return positions, bm25, bm25[positions].astype(np.float64)
        ranking = self.backend.rank(RankQuery(external_id=question.external_id, text=question.text), depth)
        known = [(index.position[a], s) for a, s in ranking.answers if a in index.position]
        positions = np.array([p for p, _ in known], dtype=np.int64)
        return positions, index.scores("both", terms), np.array([s for _, s in known], dtype=np.float64)


BM25_STAGE = FirstStage(name="bm25", title="BM25", pool="BM25 candidates")


def engine_stage(backend: RankerBackend) -> FirstStage:
    return FirstStage(name="engine", title="the engine", pool="the engine's top answers", backend=backend)
