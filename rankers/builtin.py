"""The built-in ranker: Retrieve and Rank in miniature.

1. *Retrieve*: BM25 over each answer's title + body (``index.py``) gives the candidates, best first.
   Answers that share no term with the question (BM25 score 0) are never returned.
2. *Rank*: when the ranker version uses a model, a LightGBM LambdaMART model (``training.py``) rescores
   the top ``candidates`` (default 100, at least k) from their features (``features.py``) and they are
   returned in the model's order. Otherwise (no version yet, or training kept BM25 because the model did
   not beat it in cross-validation) BM25's order is returned as it is.

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
from rankers.features import FEATURE_NAMES, candidate_features
from rankers.index import CollectionIndex, forget_indexes, load_index
from rankers.models import RankerVersion
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

    def __init__(self, path: Path) -> None:
        try:
            meta = json.loads(path.with_suffix(".json").read_text())
            self.booster = lgb.Booster(model_file=str(path))
        except (OSError, ValueError, lgb.basic.LightGBMError) as exc:
            raise RankerError(f"model file {path} cannot be loaded: {exc}") from exc
        if tuple(meta.get("features", ())) != FEATURE_NAMES:
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


def load_model(relative: str) -> RerankModel:
    """The model of a version, loaded once per process (a model file never changes: its name has its hash)."""
    path = model_path(relative)
    with _models_lock:
        model = _models.get(path)
        if model is None or not path.exists():
            model = _models[path] = RerankModel(path)
        return model


class BuiltinBackend:
    """BM25 retrieval, reranked by the version's model when it has one. Safe to share between threads."""

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
        self.model: RerankModel | None = None
        if version is not None and version.uses_model and version.model_file:
            self.model = load_model(version.model_file)

    def rank(self, query: RankQuery, k: int) -> Ranking:
        terms = tokenize(query.text)
        depth = max(k, self.candidates) if self.model is not None else k
        positions, scores = bm25_candidates(self.index, terms, depth)
        if self.model is None or len(positions) == 0:
            return Ranking(answers=[(self.index.ids[p], float(scores[p])) for p in positions[:k]])
        predicted = self.model.predict(candidate_features(self.index, terms, positions, scores))
        # Stable sort: equal model scores keep BM25's order.
        order = np.argsort(-predicted, kind="stable")[:k]
        return Ranking(answers=[(self.index.ids[positions[i]], float(predicted[i])) for i in order])


def clear_ranker_caches() -> None:
    """Forget indexes and models held in memory (the next use reads them from disk): a process restart,
    in effect."""
    forget_indexes()
    forget_models()
