"""The built-in ranker: Retrieve and Rank in miniature.

1. *Retrieve*: BM25 over each answer's title + body (``index.py``) gives the candidates, best first.
   Answers that share no term with the question (BM25 score 0) are never returned.
2. *Rank*: the version's method (chosen by training, ``trainer.learner``; ``reranking.py``) rescores the top
   ``candidates`` (default 100, at least k): ``fusion`` and ``learned-fusion`` by a weighted sum of the
   z-scored signals (``signals.py``), ``lambdamart`` by a LightGBM model of the lexical features
   (``features.py``) and signals. ``bm25`` (version 1, or what training kept) returns BM25's order.
   A version whose signals need embeddings ranks as BM25 when they are not available (``degraded``
   says why): a ranking request never computes answer embeddings.

Backends hold no database connection after construction, so one instance can serve many threads.
"""

from __future__ import annotations

import numpy as np

from corpus.models import Collection
from rankers.base import Ranking, RankQuery
from rankers.index import CollectionIndex, forget_indexes, load_index
from rankers.models import RankerVersion
from rankers.reranking import Reranker, forget_models, method_of, reordered
from rankers.semantic import forget_vectors
from rankers.text import tokenize

__all__ = ["BuiltinBackend", "bm25_candidates", "clear_ranker_caches", "method_of"]

DEFAULT_CANDIDATES = 100


def bm25_candidates(
    index: CollectionIndex, terms: list[str], depth: int, scores: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """(positions, title + body scores of all answers): the best ``depth`` answers with a score above 0.
    ``scores``: those scores when computed already (``index.scores("both", terms)``).

    Ties are broken by index position (the answers' database order), so results are reproducible.
    """
    if scores is None:
        scores = index.scores("both", terms)
    matching = np.flatnonzero(scores > 0)
    if len(matching) > depth:
        # argpartition narrows to the top `depth` cheaply; ties at the cut are settled by the sort below.
        cut = np.partition(scores[matching], len(matching) - depth)[len(matching) - depth]
        matching = matching[scores[matching] >= cut]
    order = np.lexsort((matching, -scores[matching]))
    return matching[order][:depth], scores


class BuiltinBackend:
    """BM25 retrieval, reranked as the version's method says. Safe to share between threads."""

    def __init__(
        self,
        *,
        collection: Collection,
        version: RankerVersion | None = None,
        candidates: int = DEFAULT_CANDIDATES,
        index: CollectionIndex | None = None,
    ) -> None:
        self.index = index or load_index(collection=collection)
        self.candidates = candidates
        self.version = version
        self.reranker = Reranker(version=version, index=self.index)
        self.method = self.reranker.method
        self.signals = self.reranker.signals
        self.model = self.reranker.model
        self.fusion = self.reranker.fusion
        self.degraded = self.reranker.degraded

    @property
    def reranks(self) -> bool:
        return self.reranker.active

    def rank(self, query: RankQuery, k: int, *, first_stage: np.ndarray | None = None) -> Ranking:
        """The top ``k``. ``first_stage``: the query's BM25 scores of every answer (``bm25_scores``) when
        another backend on the same index computed them already (ranker_server's interleaving)."""
        terms = tokenize(query.text)
        depth = max(k, self.candidates) if self.reranks else k
        positions, scores = bm25_candidates(self.index, terms, depth, first_stage)
        predicted = None
        if self.reranks and len(positions):
            predicted = self.reranker.scores(text=query.text, terms=terms, positions=positions, bm25=scores)
        if predicted is None:
            return Ranking(answers=[(self.index.ids[p], float(scores[p])) for p in positions[:k]])
        return Ranking(answers=reordered([self.index.ids[p] for p in positions], predicted)[:k])


def bm25_scores(backend: BuiltinBackend, query: RankQuery) -> np.ndarray:
    """The query's title + body BM25 score of every answer of ``backend``'s index: the first stage that
    every builtin version over that index shares."""
    return backend.index.scores("both", tokenize(query.text))


def shares_first_stage(one: object, other: object) -> bool:
    """Whether two backends retrieve with the same BM25 over the same index (two builtin versions of a
    collection), so the first stage's scores can be computed once for both."""
    return isinstance(one, BuiltinBackend) and isinstance(other, BuiltinBackend) and one.index is other.index


def clear_ranker_caches() -> None:
    """Forget indexes and models held in memory (the next use reads them from disk): a process restart,
    in effect."""
    forget_indexes()
    forget_models()
    forget_vectors()
