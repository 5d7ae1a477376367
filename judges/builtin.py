"""The builtin judge: no network, deterministic, from the builtin ranker's signals and people's stars.

A pair's *score* is the **propagation mean** with the **BM25 ratio** breaking its ties::

    score(q, a) = m(q, a) + TIE_BREAK · r(q, a)

* ``m(q, a) = Σ_{q' ∈ N(q), q' rated a} w(q, q') · stars(q', a) ÷ Σ_{q' ∈ N(q), q' rated a} w(q, q')``:
  the stars that the ``PROPAGATION_NEIGHBOURS`` training questions most similar to ``q`` gave ``a``,
  averaged with rating propagation's weights ``w = max(cos, 0) ** PROPAGATION_POWER``
  (``rankers.propagation.neighbour_weights``: question embeddings, ``q`` itself never among them);
  when none of them rated ``a``, the mean stars of all training labels;
* ``r(q, a)``: the answer's BM25 (title + body) over the best BM25 any answer gets for ``q`` (0 when
  nothing matches), in [0, 1]; ``TIE_BREAK`` = 0.001 makes it only order pairs with the same ``m``.

Only TRAINING questions' human labels are used, to propagate and to calibrate: the judge grades test
questions' pairs for the evaluation, so their labels must never reach it. Without embeddings (the model
package missing) or without training labels, the score is the BM25 ratio alone, and each reply says so.

Three thresholds t₀ ≤ t₁ ≤ t₂ turn a score into stars: grade = #{g : score ≥ t_g}. They are calibrated on
the training questions' labelled pairs (each scored without its own question) by matching quantiles: if
a share p_g of those pairs has at most g stars, t_g is the p_g quantile of their scores, so the judge
gives each grade about as often as people did (ties at a threshold go up). With no such labels the
defaults below are used. Each judgment's confidence is the score's distance from the nearest threshold
(``judges.confidence``): a pair no neighbour rated sits in the tie at the overall mean, near a threshold.

**How good it is** (Cranfield demo; bench/README.md, "Judges"). Held out (thresholds and propagation
from the 93 training questions, measured on the 446 labelled pairs of the 57 test questions): weighted
κ 0.131, ordinal α 0.129, same grade 0.368, leniency −0.007, where the BM25 ratio alone, its previous
signal, gave κ −0.110, α −0.121, same grade 0.307, leniency +0.052. Five-fold cross-validation over all
1,197 pairs (``bench/experiment_judge_signals.py``): κ 0.190, α 0.200, same grade 0.371 vs −0.004,
−0.005, 0.352. Better than chance, still far from a tuned strong LLM (κ ≈ 0.64): most test pairs have
no rated neighbour, so the judge knows little about them; its agreement page says so. With its grades
the BM25 ranker's NDCG@10 is +0.154 above people's (+0.389 with the BM25 ratio). Judging the 1,197
pairs takes about 8 s (the embedding model's start and the questions' encodings included).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike
from scipy import sparse

from corpus.models import Collection
from rankers.embedding import EmbeddingUnavailable
from rankers.index import CollectionIndex, load_index
from rankers.propagation import neighbour_weights
from rankers.semantic import question_vectors
from rankers.signals import PROPAGATION_NEIGHBOURS, PROPAGATION_POWER
from rankers.text import tokenize

DEFAULT_THRESHOLDS = (0.3, 0.55, 0.8)
TIE_BREAK = 0.001


def calibrate(scores: ArrayLike, stars: ArrayLike) -> tuple[float, float, float]:
    """Thresholds (t₀, t₁, t₂) matching the quantiles of ``scores`` to the shares of ``stars`` ≤ 0, 1, 2."""
    s = np.asarray(scores, dtype=np.float64)
    y = np.asarray(stars, dtype=np.int64)
    if s.shape != y.shape or s.ndim != 1:
        raise ValueError("scores and stars must be one-dimensional and of the same length")
    if s.size == 0:
        return DEFAULT_THRESHOLDS
    if y.min() < 0 or y.max() > 3:
        raise ValueError("stars must be from 0 to 3")
    # A share p_g of pairs has at most g stars: t_g is where the top (1 − p_g) of the scores begins.
    shares = np.array([np.mean(y <= g) for g in range(3)])
    t = np.maximum.accumulate(np.quantile(s, shares, method="higher"))
    return float(t[0]), float(t[1]), float(t[2])


def grade(score: float, thresholds: tuple[float, float, float]) -> int:
    return int(sum(score >= t for t in thresholds))


@dataclass(frozen=True)
class Neighbours:
    """What the judge propagates from: training questions' unit vectors and the stars they gave.

    ``gains`` and ``rated`` are (training questions × answers) CSC matrices over the index's answer
    positions: the stars, and 1 where the question rated the answer (0 stars included).
    """

    question_ids: tuple[int, ...]
    vectors: np.ndarray
    gains: sparse.csc_matrix
    rated: sparse.csc_matrix
    overall: float  # the mean stars of all the training labels


def neighbour_mean(weights: np.ndarray, stars: np.ndarray, rated: np.ndarray, overall: float) -> float:
    """``m(q, a)`` (module docstring) from the neighbours' weights and their stars and rated flags for
    ``a`` (all of length #training questions); ``overall`` when no neighbour with weight > 0 rated it."""
    w = np.asarray(weights, dtype=np.float64)
    has = (np.asarray(rated) > 0) & (w > 0)
    total = float(w[has].sum())
    return float(w[has] @ np.asarray(stars, dtype=np.float64)[has] / total) if total > 0 else overall


@dataclass
class BuiltinScorer:
    """Scores of pairs (module docstring); one BM25 pass and one neighbour search per question (cached).

    ``neighbours`` None: the BM25 ratio alone (``fallback`` says why)."""

    index: CollectionIndex
    neighbours: Neighbours | None = None
    fallback: str = ""

    def __post_init__(self) -> None:
        self._ratios: dict[str, np.ndarray] = {}
        self._weights: dict[tuple[int | None, str], np.ndarray] = {}

    def ratio(self, question_text: str, answer_external_id: str) -> float:
        scores = self._ratios.get(question_text)
        if scores is None:
            raw = np.asarray(self.index.scores("both", tokenize(question_text)), dtype=np.float64)
            best = float(raw.max()) if raw.size else 0.0
            scores = raw / best if best > 0 else np.zeros_like(raw)
            self._ratios[question_text] = scores
        position = self.index.position.get(answer_external_id)
        return 0.0 if position is None else float(scores[position])

    def mean(self, question_id: int | None, question_text: str, answer_external_id: str) -> float:
        """``m(q, a)``; a training question never counts as its own neighbour."""
        neighbours = self.neighbours
        assert neighbours is not None
        key = (question_id, question_text)
        weights = self._weights.get(key)
        if weights is None:
            own = neighbours.question_ids.index(question_id) if question_id in neighbours.question_ids else -1
            vector = question_vectors([question_text])
            weights = neighbour_weights(
                vector,
                neighbours.vectors,
                exclude=np.array([own]),
                top_n=PROPAGATION_NEIGHBOURS,
                power=PROPAGATION_POWER,
            ).toarray()[0]
            self._weights[key] = weights
        position = self.index.position.get(answer_external_id)
        if position is None:
            return neighbours.overall
        stars = neighbours.gains[:, position].toarray()[:, 0]
        rated = neighbours.rated[:, position].toarray()[:, 0]
        return neighbour_mean(weights, stars, rated, neighbours.overall)

    def score(self, question_text: str, answer_external_id: str, question_id: int | None = None) -> float:
        ratio = self.ratio(question_text, answer_external_id)
        if self.neighbours is None:
            return ratio
        return self.mean(question_id, question_text, answer_external_id) + TIE_BREAK * ratio

    def describe(self, question_text: str, answer_external_id: str, question_id: int | None = None) -> str:
        ratio = self.ratio(question_text, answer_external_id)
        if self.neighbours is None:
            return f"BM25 ratio {ratio:.3f} (the answer's BM25 over the question's best; {self.fallback})"
        mean = self.mean(question_id, question_text, answer_external_id)
        return (
            f"score {mean + TIE_BREAK * ratio:.4f}: similar training questions' mean stars for this answer "
            f"{mean:.3f} (the mean of all training labels {self.neighbours.overall:.3f} when none rated "
            f"it), plus {TIE_BREAK} × BM25 ratio {ratio:.3f}"
        )


def neighbours_from(
    index: CollectionIndex, labelled: list[tuple[int, str, str, int]]
) -> tuple[Neighbours | None, str]:
    """(neighbours, "") from TRAINING questions' (question id, text, answer external id, stars), or
    (None, why not) when there are none or the embedding model cannot be used."""
    if not labelled:
        return None, "no human labels of training questions yet, so the BM25 ratio alone"
    question_ids = sorted({q for q, _, _, _ in labelled})
    texts = {q: text for q, text, _, _ in labelled}
    try:
        vectors = question_vectors([texts[q] for q in question_ids])
    except EmbeddingUnavailable as exc:
        return None, f"question embeddings unavailable ({exc}), so the BM25 ratio alone"
    row = {q: i for i, q in enumerate(question_ids)}
    cells = [(row[q], index.position[a], stars) for q, _, a, stars in labelled if a in index.position]
    rows = np.array([r for r, _, _ in cells], dtype=np.int64)
    columns = np.array([c for _, c, _ in cells], dtype=np.int64)
    shape = (len(question_ids), index.size)
    gains = sparse.csc_matrix(
        (np.array([s for _, _, s in cells], dtype=np.float64), (rows, columns)), shape=shape
    )
    rated = sparse.csc_matrix((np.ones(len(cells)), (rows, columns)), shape=shape)
    overall = float(np.mean([s for _, _, s in cells])) if cells else 0.0
    return Neighbours(tuple(question_ids), np.asarray(vectors, dtype=np.float64), gains, rated, overall), ""


def scorer_for(
    *, collection: Collection, labelled: list[tuple[int, str, str, int]] | None = None
) -> BuiltinScorer:
    """The collection's scorer, propagating from ``labelled`` (TRAINING questions' labels only)."""
    index = load_index(collection=collection)
    neighbours, fallback = neighbours_from(index, labelled or [])
    return BuiltinScorer(index, neighbours, fallback)


def calibrate_on(
    *, scorer: BuiltinScorer, labelled: list[tuple[int, str, str, int]]
) -> tuple[tuple[float, float, float], int]:
    """(thresholds, pairs used) from human-labelled (question id, text, answer external id, stars), each
    scored without its own question among the neighbours."""
    by_question: dict[tuple[int, str], list[tuple[str, int]]] = defaultdict(list)
    for question_id, question, answer, stars in labelled:
        by_question[(question_id, question)].append((answer, stars))
    scores, stars_list = [], []
    for (question_id, question), items in by_question.items():
        for answer, stars in items:
            scores.append(scorer.score(question, answer, question_id))
            stars_list.append(stars)
    return calibrate(scores, stars_list), len(scores)


def reply_text(
    description: str, score: float, thresholds: tuple[float, float, float], labels_used: int
) -> str:
    t0, t1, t2 = thresholds
    basis = (
        f"calibrated on {labels_used} human labels of training questions"
        if labels_used
        else "defaults (no human labels of training questions yet)"
    )
    return (
        f"{description}; thresholds {t0:.4f} / {t1:.4f} / {t2:.4f} ({basis}). "
        f"Grade: {grade(score, thresholds)}"
    )
