"""Is the challenger better than the champion? A probability that accounts for unlabelled answers.

Pure numpy. Two sources of doubt, combined by simulation:

1. **Unlabelled pairs.** Each unlabelled pair's stars are drawn independently from its predicted
   distribution (:mod:`.relevance`); labelled pairs keep their label. One draw ``s`` is a full
   assignment of stars, under which every question has an NDCG@k for both runs
   (:func:`~evaluation.uncertainty.pairs.ndcg_for_labels`); ``d_sq = NDCG_challenger − NDCG_champion``
   (questions undefined in the draw are left out, as the headline leaves them out).
2. **Which questions we happened to test on** (what the paired randomization test and the bootstrap
   interval of ``versions_compare`` measure): each draw is paired with ``B`` bootstrap resamples of the
   questions (the same resamples for every draw), ``Δ_sb = sum_q c_bq d_sq / sum_q c_bq`` with ``c_bq``
   the times question ``q`` is in resample ``b``.

``P(challenger better) = (#{Δ_sb > 0} + #{Δ_sb = 0} / 2) / (S · B)``. With every pair labelled this is the
bootstrap probability that the mean difference is positive; with one question it is the probability,
under the predicted labels, that the challenger scores higher.

Also returned: the expected difference ``mean_s mean_q d_sq`` and ``label_sd``, the standard deviation of
``mean_q d_sq`` over draws (the doubt due to unlabelled pairs alone), and the same for each run's
mean NDCG@k (the headline's estimate from predicted relevance).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from .pairs import JudgingArrays, ndcg_for_labels

__all__ = ["Improvement", "sample_stars", "sampled_means", "probability_of_improvement"]

DEFAULT_SAMPLES = 400
DEFAULT_RESAMPLES = 50


def sample_stars(
    arrays: JudgingArrays, probs: NDArray[np.float64], n_samples: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """``(S, P)`` full assignments of stars: labels kept, unlabelled pairs drawn from ``probs``."""
    if n_samples < 1:
        raise ValueError(f"n_samples must be at least 1, got {n_samples}")
    p = np.asarray(probs, dtype=np.float64)
    if p.shape != (arrays.labels.size, 4) or (p < 0).any() or not np.allclose(p.sum(axis=1), 1.0):
        raise ValueError("probs must be (pairs, 4) rows of probabilities summing to 1")
    stars = np.broadcast_to(np.nan_to_num(arrays.labels, nan=0.0), (n_samples, arrays.labels.size)).copy()
    unknown = np.flatnonzero(arrays.unknown)
    if unknown.size:
        cdf = np.cumsum(p[unknown], axis=1)
        draws = rng.random((n_samples, unknown.size))
        stars[:, unknown] = (draws[:, :, None] > cdf[None, :, :3]).sum(axis=2)
    return stars


def sampled_means(ndcg: NDArray[np.float64]) -> NDArray[np.float64]:
    """``(S, R)`` mean NDCG over the questions defined in each draw, from ``(S, R, Q)``."""
    with np.errstate(invalid="ignore"):
        return np.nanmean(np.where(np.isnan(ndcg).all(axis=2, keepdims=True), 0.0, ndcg), axis=2)


@dataclass(frozen=True)
class Improvement:
    """See the module docstring. ``run_means``: expected mean NDCG@k of each run; ``run_sd``: its sd."""

    probability: float
    expected_difference: float
    label_sd: float
    question_sd: float
    run_means: tuple[float, ...]
    run_sd: tuple[float, ...]
    questions: int


def probability_of_improvement(
    arrays: JudgingArrays,
    probs: NDArray[np.float64],
    *,
    challenger: int = 1,
    champion: int = 0,
    n_samples: int = DEFAULT_SAMPLES,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int | None = 0,
) -> Improvement:
    """P(challenger's mean NDCG@k > champion's) under label and question-sampling doubt."""
    for name, value in (("challenger", challenger), ("champion", champion)):
        if not 0 <= value < arrays.n_runs:
            raise ValueError(f"{name} must be a run index between 0 and {arrays.n_runs - 1}, got {value}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    rng = np.random.default_rng(seed)
    stars = sample_stars(arrays, probs, n_samples, rng)
    ndcg = ndcg_for_labels(arrays, stars)  # (S, R, Q)
    means = sampled_means(ndcg)
    d = ndcg[:, challenger] - ndcg[:, champion]  # (S, Q)
    defined = ~np.isnan(d)
    n_q = arrays.n_questions
    if n_q == 0 or not defined.any():
        nan = math.nan
        return Improvement(nan, nan, nan, nan, tuple(nan for _ in range(arrays.n_runs)), (), 0)
    counts = rng.multinomial(n_q, np.full(n_q, 1.0 / n_q), size=n_resamples).astype(np.float64)  # (B, Q)
    num = np.where(defined, d, 0.0) @ counts.T  # (S, B)
    den = defined.astype(np.float64) @ counts.T
    with np.errstate(invalid="ignore", divide="ignore"):
        delta = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
    tol = 1e-12
    probability = float(((delta > tol).sum() + 0.5 * (np.abs(delta) <= tol).sum()) / delta.size)
    per_draw = np.where(defined, d, 0.0).sum(axis=1) / np.maximum(defined.sum(axis=1), 1)
    seen = defined.sum(axis=0)  # per question, the draws where it is defined
    finite = np.where(defined, d, 0.0).sum(axis=0)[seen > 0] / seen[seen > 0]
    question_sd = float(finite.std(ddof=1) / math.sqrt(finite.size)) if finite.size > 1 else 0.0
    return Improvement(
        probability=probability,
        expected_difference=float(per_draw.mean()),
        label_sd=float(per_draw.std()),
        question_sd=question_sd,
        run_means=tuple(float(v) for v in means.mean(axis=0)),
        run_sd=tuple(float(v) for v in means.std(axis=0)),
        questions=int(defined.any(axis=0).sum()),
    )
