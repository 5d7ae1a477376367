"""The builtin judge: no network, deterministic, from the builtin ranker's BM25 signal.

An answer's *score* for a question is its BM25 (title + body) divided by the best BM25 any answer of
the collection gets for that question (0 when nothing matches), so it lies in [0, 1] whatever the
question's length. Three thresholds t₀ ≤ t₁ ≤ t₂ turn it into stars: grade = #{g : score ≥ t_g}
(so the best answer of a question, score 1, can get 3 stars even when t₂ = 1).

The thresholds are calibrated on the human labels of TRAINING questions by matching quantiles: if a
share p_g of those pairs has at most g stars, t_g is the p_g quantile of their scores, so the judge gives
each grade about as often as people did (ties at a threshold go up). Test questions' labels are never
used: the judge grades test questions' pairs for the evaluation. With no such labels the defaults below
are used. Each judgment's certainty is the score's distance from the nearest threshold
(``judges.certainty``).

**How good it is** (Cranfield demo, ``bench/bench_judge.py``, bench/README.md): on the 446 labelled
pairs of the 57 test questions, held out from the calibration, weighted κ −0.110, ordinal α −0.121,
same grade 0.307 — no better than chance (0.067 / 0.072 in-sample on the training questions' pairs).
BM25 is a weak judge of grades among answers people already found worth rating, and it favours a BM25
ranker (NDCG@10 of BM25 +0.389 with its grades). Other offline signals were measured the same way
(``bench/experiment_judge_signals.py``): the similarity-weighted mean stars that neighbouring training
questions gave the answer (from rating propagation, ``rankers.propagation``) reaches κ 0.151 but α
0.038, same grade 0.274 and leniency +0.655 (most test pairs have no rated neighbour, so they tie at
the overall mean); the answer's mean stars elsewhere κ 0.130; least squares over all the signals κ
0.074; the embedding cosine was no better than BM25 (Spearman 0.02 over all labelled pairs). None is clearly better on every
figure, so the judge keeps the BM25 ratio, which needs no embeddings or model. Its agreement page says
how weak it is; a trainer must not trust it on such figures.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from corpus.models import Collection
from rankers.index import CollectionIndex, load_index
from rankers.text import tokenize

DEFAULT_THRESHOLDS = (0.3, 0.55, 0.8)


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


@dataclass
class BuiltinScorer:
    """BM25-ratio scores of pairs, one BM25 pass per question (cached)."""

    index: CollectionIndex

    def __post_init__(self) -> None:
        self._by_question: dict[str, np.ndarray] = {}

    def score(self, question_text: str, answer_external_id: str) -> float:
        scores = self._by_question.get(question_text)
        if scores is None:
            raw = np.asarray(self.index.scores("both", tokenize(question_text)), dtype=np.float64)
            best = float(raw.max()) if raw.size else 0.0
            scores = raw / best if best > 0 else np.zeros_like(raw)
            self._by_question[question_text] = scores
        position = self.index.position.get(answer_external_id)
        return 0.0 if position is None else float(scores[position])


def scorer_for(*, collection: Collection) -> BuiltinScorer:
    return BuiltinScorer(load_index(collection=collection))


def calibrate_on(
    *, scorer: BuiltinScorer, labelled: list[tuple[str, str, int]]
) -> tuple[tuple[float, float, float], int]:
    """(thresholds, pairs used) from human-labelled (question text, answer external id, stars)."""
    by_question: dict[str, list[tuple[str, int]]] = defaultdict(list)
    for question, answer, stars in labelled:
        by_question[question].append((answer, stars))
    scores, stars_list = [], []
    for question, items in by_question.items():
        for answer, stars in items:
            scores.append(scorer.score(question, answer))
            stars_list.append(stars)
    return calibrate(scores, stars_list), len(scores)


def reply_text(score: float, thresholds: tuple[float, float, float], labels_used: int) -> str:
    t0, t1, t2 = thresholds
    basis = (
        f"calibrated on {labels_used} human labels of training questions"
        if labels_used
        else "defaults (no human labels of training questions yet)"
    )
    return (
        f"BM25 ratio {score:.3f} (the answer's BM25 over the question's best); thresholds "
        f"{t0:.3f} / {t1:.3f} / {t2:.3f} ({basis}). Grade: {grade(score, thresholds)}"
    )
