"""Reranking a first stage's candidates as a version says: Retrieve and Rank's *rank* step.

The first stage retrieves, best first: BM25 over the app's copy of the answers (the builtin ranker,
``rankers.builtin``) or the user's own search engine / ranker service (an ``engine`` or ``http`` ranker,
``RerankingBackend`` here). A version that learned from ratings then rescores the first stage's top
``candidates`` (``Reranker``):

- ``fusion`` and ``learned-fusion``: Σ w_f · z(f), the weighted sum of the z-scored signals
  (``rankers.signals``, ``rankers.fusion``);
- ``lambdamart``: a LightGBM model of the 12 lexical features (``rankers.features``) and the signals.

Any other method (``bm25``, or an engine ranker's version that is "the engine as it is") keeps the
first stage's order. The candidates, and so the features, are the same at training and ranking
(``trainer.learner`` builds its examples from the same first stage at the same depth): a model learned
on one depth ranks another badly.

A version whose signals need embeddings ranks in the first stage's order when they are not available
(``degraded`` says why). For an engine's candidates the answer vectors are computed only for answers the
engine returns (``rankers.semantic.CandidateVectors``); ``RerankingBackend.rerank(..., encode=False)``
never encodes (a latency-bound caller falls back to the engine's order instead).

Backends hold no database connection after construction, so one instance can serve many threads.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import lightgbm as lgb
import numpy as np
from django.conf import settings

from rankers.base import RankerBackend, RankerError, Ranking, RankQuery
from rankers.embedding import EmbeddingUnavailable, model_unavailable_reason
from rankers.features import FEATURE_NAMES, candidate_features
from rankers.fusion import LinearFusion
from rankers.index import CollectionIndex
from rankers.models import RankerVersion
from rankers.semantic import CandidateVectors, answer_texts, answer_vectors, question_vectors
from rankers.signals import SEMANTIC, RatedQuestions, candidate_signals
from rankers.text import tokenize

RERANKING_METHODS = ("fusion", "learned-fusion", "lambdamart")
#: Why ``rerank_why(..., encode=False)`` kept the first stage's order: an answer met for the first time.
VECTORS_MISSING = "the answers' vectors are not computed yet"


class RerankModel:
    """A trained LambdaMART model, loaded from its file under MODEL_DIR."""

    def __init__(self, path: Path, features: tuple[str, ...] = FEATURE_NAMES) -> None:
        try:
            meta = json.loads(path.with_suffix(".json").read_text())
            self.booster = lgb.Booster(model_file=str(path))
        except (OSError, ValueError, lgb.basic.LightGBMError) as exc:
            raise RankerError(f"model file {path} cannot be loaded: {exc}") from exc
        if tuple(meta.get("features", ())) != features:
            raise RankerError(f"model file {path} was trained on other features; retrain the ranker")
        self.path = path
        # Booster.predict from several threads at once is not documented as safe; a prediction is ~0.1 ms.
        self._lock = threading.Lock()

    def predict(self, features: np.ndarray) -> np.ndarray:
        with self._lock:
            return np.asarray(self.booster.predict(features, num_threads=1))


def model_path(relative: str) -> Path:
    return Path(settings.MODEL_DIR) / relative


_models: dict[Path, RerankModel] = {}
_models_lock = threading.Lock()


def forget_models() -> None:
    with _models_lock:
        _models.clear()
    _rated.clear()


def load_model(relative: str, features: tuple[str, ...] = FEATURE_NAMES) -> RerankModel:
    """The model of a version, loaded once per process (a model file never changes: its name has its hash)."""
    path = model_path(relative)
    with _models_lock:
        model = _models.get(path)
        if model is None or not path.exists():
            model = _models[path] = RerankModel(path, features)
        return model


_rated: dict[tuple[Path, str], RatedQuestions] = {}


def load_rated(relative: str, index: CollectionIndex) -> RatedQuestions:
    """The rated training questions a version propagates from, mapped onto the current index."""
    path = model_path(relative)
    key = (path, index.fingerprint)
    rated = _rated.get(key)
    if rated is None:
        try:
            rated = _rated[key] = RatedQuestions.load(path, index)
        except (OSError, ValueError, KeyError) as exc:
            raise RankerError(f"rated-questions file {path} cannot be loaded: {exc}") from exc
    return rated


def method_of(version: RankerVersion | None) -> str:
    """How a version ranks; versions from before methods had names rank with their model or as BM25."""
    if version is None:
        return "bm25"
    return version.method or ("lambdamart" if version.uses_model and version.model_file else "bm25")


def _signals_of(version: RankerVersion | None) -> tuple[str, ...]:
    params = ((version.details or {}).get("params") or {}) if version is not None else {}
    return tuple(params.get("signals") or ())


def needs_vectors(version: RankerVersion | None) -> bool:
    """Whether the version's signals need answer embeddings."""
    return any(signal in SEMANTIC for signal in _signals_of(version))


def reranks(version: RankerVersion | None) -> bool:
    """Whether the version reorders its first stage's candidates (else it ranks as the first stage)."""
    return version is not None and bool(version.method) and method_of(version) in RERANKING_METHODS


class Reranker:
    """A version's way of reordering one question's candidates. Safe to share between threads.

    ``vectors``: where an engine's candidates get their vectors; None for the builtin ranker, whose
    answers' vectors are the collection's built matrix.
    """

    def __init__(
        self,
        *,
        version: RankerVersion | None,
        index: CollectionIndex,
        vectors: CandidateVectors | None = None,
        first_stage: str = "BM25",
    ) -> None:
        self.index = index
        self.version = version
        self.method = method_of(version)
        params = ((version.details or {}).get("params") or {}) if version is not None else {}
        self.signals = _signals_of(version)
        self.model: RerankModel | None = None
        self.fusion: LinearFusion | None = None
        self.rated: RatedQuestions | None = None
        self.answer_vectors: np.ndarray | None = None
        self.vectors = vectors
        self.degraded = ""
        if version is None or self.method not in RERANKING_METHODS:
            return
        if self.method == "lambdamart" and version.model_file:
            self.model = load_model(version.model_file, FEATURE_NAMES + self.signals)
        elif self.method in ("fusion", "learned-fusion"):
            self.fusion = LinearFusion(weights=tuple(params["weights"]), feature_names=self.signals)
        if self.semantic and vectors is None:
            self.answer_vectors = answer_vectors(index=index)
            if self.answer_vectors is None:
                self.degraded = (
                    f"the answer embeddings are not built yet, so this version ranks as {first_stage}"
                )
        if "propagation" in self.signals and version.details.get("rated_file"):
            self.rated = load_rated(version.details["rated_file"], index)

    @property
    def semantic(self) -> bool:
        return needs_vectors(self.version)

    def prepare(self, text: str) -> None:
        """Compute now what scoring ``text``'s candidates needs of the question alone (its vector), so that a
        server can do it while the engine searches. EmbeddingUnavailable when the model cannot be used."""
        if self.active and self.semantic:
            question_vectors([text])

    @property
    def active(self) -> bool:
        return (self.model is not None or self.fusion is not None) and not self.degraded

    def scores(
        self,
        *,
        text: str,
        terms: list[str],
        positions: np.ndarray,
        bm25: np.ndarray,
        engine_scores: np.ndarray | None = None,
        encode: bool = True,
    ) -> np.ndarray | None:
        """The version's score of each candidate (positions in first-stage order), or None when the
        vectors it needs are not available (then the first stage's order stands).

        ``bm25``: title + body BM25 of every answer; ``engine_scores``: the engine's, per candidate.
        ``encode`` False: vectors of an engine's candidates seen for the first time are not computed.
        """
        question_vector = None
        vectors = None
        if self.semantic:
            try:
                question_vector = question_vectors([text])[0]
                if self.vectors is not None:
                    vectors = self.vectors.of(positions) if encode else self.vectors.cached(positions)
                    if vectors is None:
                        return None
            except EmbeddingUnavailable:
                return None
        signals = candidate_signals(
            self.index,
            self.index.term_ids(terms),
            positions,
            bm25,
            names=self.signals,
            question_vector=question_vector,
            answer_vectors=self.answer_vectors,
            candidate_vectors=vectors,
            rated=self.rated,
            engine_scores=engine_scores,
        )
        if self.fusion is not None:
            return self.fusion.score(signals, [len(positions)])
        assert self.model is not None
        features = candidate_features(self.index, terms, positions, bm25)
        return self.model.predict(np.hstack([features, signals]) if self.signals else features)


def reordered(ids: list[str], scores: np.ndarray) -> list[tuple[str, float]]:
    """``ids`` by descending score; a stable sort, so equal scores keep the first stage's order."""
    order = np.argsort(-scores, kind="stable")
    return [(ids[i], float(scores[i])) for i in order]


class RerankingBackend:
    """An engine's (or ranker service's) top ``depth`` answers, reranked as ``version`` says.

    The answers it returns that the collection does not know, and any below ``depth``, follow the
    reranked ones in the engine's order (their scores continue below the lowest reranked score).
    """

    def __init__(
        self, *, first: RankerBackend, index: CollectionIndex, version: RankerVersion, depth: int
    ) -> None:
        self.first = first
        self.index = index
        self.version = version
        self.depth = depth
        probe = Reranker(version=version, index=index, vectors=None, first_stage="the engine")
        vectors = CandidateVectors(index=index, texts=answer_texts(index=index)) if probe.semantic else None
        self.reranker = Reranker(version=version, index=index, vectors=vectors, first_stage="the engine")

    @property
    def degraded(self) -> str:
        return self.reranker.degraded

    def rank(self, query: RankQuery, k: int) -> Ranking:
        ranking = self.first.rank(query, max(k, self.depth) if self.reranker.active else k)
        return self.rerank(query, ranking, k)

    def rerank(self, query: RankQuery, ranking: Ranking, k: int, *, encode: bool = True) -> Ranking:
        """The first stage's ``ranking`` of ``query`` reordered; its own order when nothing can be
        reranked (no model, no known answer, vectors missing)."""
        return self.rerank_why(query, ranking, k, encode=encode)[0]

    def rerank_why(
        self, query: RankQuery, ranking: Ranking, k: int, *, encode: bool = True
    ) -> tuple[Ranking, str]:
        """``rerank``, and why the first stage's order stands: "" when the version reordered it."""
        head = ranking.answers[: self.depth]
        known = [(answer_id, score) for answer_id, score in head if answer_id in self.index.position]
        if not self.reranker.active or not known:
            if self.reranker.active:
                why = f"none of the top {self.depth} answers is an answer of the collection"
            else:
                why = self.degraded or f"version {self.version.label} has no model to rerank with"
            return Ranking(answers=ranking.answers[:k], unknown_ids=ranking.unknown_ids), why
        positions = np.array([self.index.position[a] for a, _ in known], dtype=np.int64)
        terms = tokenize(query.text)
        predicted = self.reranker.scores(
            text=query.text,
            terms=terms,
            positions=positions,
            bm25=self.index.scores("both", terms),
            engine_scores=np.array([s for _, s in known], dtype=np.float64),
            encode=encode,
        )
        if predicted is None:
            why = (
                VECTORS_MISSING
                if not encode
                else "the embedding model cannot be used: " + (model_unavailable_reason() or "unknown reason")
            )
            return Ranking(answers=ranking.answers[:k], unknown_ids=ranking.unknown_ids), why
        answers = reordered([a for a, _ in known], predicted)
        floor = float(predicted.min())
        rest = [a for a, _ in head if a not in self.index.position] + [
            a for a, _ in ranking.answers[self.depth :]
        ]
        answers += [(answer_id, floor - 1.0 - i) for i, answer_id in enumerate(rest)]
        return Ranking(answers=answers[:k], unknown_ids=ranking.unknown_ids), ""
