"""The built-in ranker: Retrieve and Rank in miniature.

1. *Retrieve*: BM25 over each answer's title + body (``index.py``) gives the candidates, best first.
   Answers that share no term with the question (BM25 score 0) are never returned.
2. *Rank*: the version's method (chosen by training, ``trainer.learner``) rescores the top
   ``candidates`` (default 100, at least k): ``fusion`` and ``learned-fusion`` by a weighted sum of the
   z-scored signals (``signals.py``), ``lambdamart`` by a LightGBM model of the lexical features
   (``features.py``) and signals. ``bm25`` (version 1, or what training kept) returns BM25's order.
   A version whose signals need embeddings ranks as BM25 when they are not available (``degraded``
   says why): a ranking request never computes answer embeddings.

Backends hold no database connection after construction, so one instance can serve many threads.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path

import lightgbm as lgb
import numpy as np
from django.conf import settings

from corpus.models import Collection
from rankers.base import RankerError, Ranking, RankQuery
from rankers.embedding import EmbeddingUnavailable
from rankers.features import FEATURE_NAMES, candidate_features
from rankers.fusion import LinearFusion
from rankers.index import CollectionIndex, forget_indexes, load_index
from rankers.models import RankerVersion
from rankers.semantic import answer_vectors, forget_vectors, question_vectors
from rankers.signals import SEMANTIC, RatedQuestions, candidate_signals
from rankers.text import tokenize

DEFAULT_CANDIDATES = 100


def bm25_candidates(index: CollectionIndex, terms: list[str], depth: int) -> tuple[np.ndarray, np.ndarray]:
    """(positions, title + body scores of all answers): the best ``depth`` answers with a score above 0.

    Ties are broken by index position (the answers' database order), so results are reproducible.
    """
    scores = index.scores("both", terms)
    matching = np.flatnonzero(scores > 0)
    if len(matching) > depth:
        # argpartition narrows to the top `depth` cheaply; ties at the cut are settled by the sort below.
        cut = np.partition(scores[matching], len(matching) - depth)[len(matching) - depth]
        matching = matching[scores[matching] >= cut]
    order = np.lexsort((matching, -scores[matching]))
    return matching[order][:depth], scores


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
        self.method = method_of(version)
        params = ((version.details or {}).get("params") or {}) if version is not None else {}
        self.signals: tuple[str, ...] = tuple(params.get("signals") or ())
        self.model: RerankModel | None = None
        self.fusion: LinearFusion | None = None
        self.rated: RatedQuestions | None = None
        self.answer_vectors: np.ndarray | None = None
        self.degraded = ""
        if version is None or self.method == "bm25":
            return
        if self.method == "lambdamart" and version.model_file:
            self.model = load_model(version.model_file, FEATURE_NAMES + self.signals)
        elif self.method in ("fusion", "learned-fusion"):
            self.fusion = LinearFusion(weights=tuple(params["weights"]), feature_names=self.signals)
        if any(signal in SEMANTIC for signal in self.signals):
            self.answer_vectors = answer_vectors(index=self.index)
            if self.answer_vectors is None:
                self.degraded = "the answer embeddings are not built yet, so this version ranks as BM25"
        if "propagation" in self.signals and version.details.get("rated_file"):
            self.rated = load_rated(version.details["rated_file"], self.index)

    @property
    def reranks(self) -> bool:
        return (self.model is not None or self.fusion is not None) and not self.degraded

    def rank(self, query: RankQuery, k: int) -> Ranking:
        terms = tokenize(query.text)
        depth = max(k, self.candidates) if self.reranks else k
        positions, scores = bm25_candidates(self.index, terms, depth)
        if not self.reranks or len(positions) == 0:
            return Ranking(answers=[(self.index.ids[p], float(scores[p])) for p in positions[:k]])
        vector = None
        if any(signal in SEMANTIC for signal in self.signals):
            try:
                vector = question_vectors([query.text])[0]
            except EmbeddingUnavailable:
                return Ranking(answers=[(self.index.ids[p], float(scores[p])) for p in positions[:k]])
        signals = candidate_signals(
            self.index,
            self.index.term_ids(terms),
            positions,
            scores,
            names=self.signals,
            question_vector=vector,
            answer_vectors=self.answer_vectors,
            rated=self.rated,
        )
        if self.fusion is not None:
            predicted = self.fusion.score(signals, [len(positions)])
        else:
            assert self.model is not None
            features = candidate_features(self.index, terms, positions, scores)
            predicted = self.model.predict(np.hstack([features, signals]) if self.signals else features)
        # Stable sort: equal scores keep BM25's order.
        order = np.argsort(-predicted, kind="stable")[:k]
        return Ranking(answers=[(self.index.ids[positions[i]], float(predicted[i])) for i in order])


def clear_ranker_caches() -> None:
    """Forget indexes and models held in memory (the next use reads them from disk): a process restart,
    in effect."""
    forget_indexes()
    forget_models()
    forget_vectors()
    _rated.clear()
