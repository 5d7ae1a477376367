"""How relevant is an unlabelled answer likely to be? A per-pair distribution over 0–3 stars.

Pure numpy. The ranker's signal we have for every pair is *where* the compared runs put it, so the model
predicts stars from two features of the pair, both known for labelled and unlabelled pairs alike:

* its best rank in any run's top k, bucketed as ``floor(log2(rank))`` (ranks 1 | 2–3 | 4–7 | 8–15 | 16+),
* whether every compared run has it in its top k (runs that agree tend to agree on good answers).

With ``n_bs`` the labelled pairs of bucket ``b`` with ``s`` stars (labels so far, every question of the
arrays) and ``p0`` the star distribution of all labelled retrieved pairs with one pseudo-count per star,
``p0(s) = (n_s + 1) / (n + 4)``, the prediction is the smoothed bucket frequency

    P(stars = s | bucket b) = (n_bs + α p0(s)) / (n_b + α),    α = 4 (``prior_weight``)

so a bucket with few labels leans on the overall distribution, and with no labels at all every pair is
uniform (0.25 per star: "we know nothing"). Labelled pairs get a one-hot row at their label.

Questions differ (some have many good answers, some none), so the odds of "relevant" (1 star or more)
are then scaled per question by how its labelled retrieved pairs did against the model (empirical
Bayes, shrunk by ``m = 4`` pseudo-pairs; 4 was chosen on the demo edition among 1, 2, 4, 8, 16): with ``R_q`` its labelled pairs found relevant and ``E_q`` the
sum of their predicted ``P(relevant)``,

    θ_q = (R_q + m) / (E_q + m),   odds'(relevant) = θ_q · odds_b(relevant),

the relevant stars keeping their proportions and 0 stars taking the rest. A question without labels
has ``θ_q = 1``.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .pairs import STARS, JudgingArrays

__all__ = ["expected_gain", "relevance_probabilities"]

PRIOR_WEIGHT = 4.0
QUESTION_SHRINKAGE = 4.0
_BUCKETS = 5


def _bucket(arrays: JudgingArrays) -> NDArray[np.int64]:
    best = arrays.best_rank()
    depth = np.where(best > 0, np.minimum(np.floor(np.log2(np.maximum(best, 1))), _BUCKETS - 1), -1)
    agree = (arrays.retrieved_by() == arrays.n_runs).astype(np.int64)
    return np.where(depth >= 0, depth.astype(np.int64) * 2 + agree, -1)


def relevance_probabilities(
    arrays: JudgingArrays,
    *,
    prior_weight: float = PRIOR_WEIGHT,
    extra_counts: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """``(P, 4)`` probabilities of 0, 1, 2, 3 stars for every pair (see the module docstring).

    ``extra_counts`` (``(2 * 5, 4)``) adds labelled pairs counted elsewhere (e.g. training questions) to
    the bucket counts. Pairs no run retrieved keep their label, or, when unlabelled, get ``p0``.
    """
    if prior_weight <= 0:
        raise ValueError(f"prior_weight must be positive, got {prior_weight!r}")
    bucket = _bucket(arrays)
    labelled = ~arrays.unknown
    counts = np.zeros((_BUCKETS * 2, STARS.size))
    retrieved_labelled = labelled & (bucket >= 0)
    np.add.at(counts, (bucket[retrieved_labelled], arrays.labels[retrieved_labelled].astype(np.int64)), 1.0)
    if extra_counts is not None:
        extra = np.asarray(extra_counts, dtype=np.float64)
        if extra.shape != counts.shape or (extra < 0).any():
            raise ValueError(f"extra_counts must be non-negative with shape {counts.shape}")
        counts += extra
    p0 = (counts.sum(axis=0) + 1.0) / (counts.sum() + STARS.size)
    table = (counts + prior_weight * p0) / (counts.sum(axis=1, keepdims=True) + prior_weight)
    probs = np.where((bucket >= 0)[:, None], table[np.maximum(bucket, 0)], p0)
    probs = _question_effect(arrays, probs, retrieved_labelled)
    known = np.flatnonzero(labelled)
    probs[known] = 0.0
    probs[known, arrays.labels[known].astype(np.int64)] = 1.0
    return probs


def _question_effect(
    arrays: JudgingArrays, probs: NDArray[np.float64], evidence: NDArray[np.bool_]
) -> NDArray[np.float64]:
    """Scale each question's odds of relevance by ``θ_q`` (see the module docstring)."""
    n_q = arrays.n_questions
    relevant = np.bincount(
        arrays.pair_question[evidence], weights=(arrays.labels[evidence] > 0).astype(float), minlength=n_q
    )
    expected = np.bincount(arrays.pair_question[evidence], weights=1.0 - probs[evidence, 0], minlength=n_q)
    theta = (relevant + QUESTION_SHRINKAGE) / (expected + QUESTION_SHRINKAGE)
    p_rel = 1.0 - probs[:, 0]
    odds = theta[arrays.pair_question] * p_rel / np.maximum(probs[:, 0], 1e-12)
    new_rel = odds / (1.0 + odds)
    scale = np.where(p_rel > 0, new_rel / np.where(p_rel > 0, p_rel, 1.0), 0.0)
    out = probs.copy()
    out[:, 1:] = probs[:, 1:] * scale[:, None]
    out[:, 0] = 1.0 - out[:, 1:].sum(axis=1)
    return out


def bucket_counts(arrays: JudgingArrays) -> NDArray[np.float64]:
    """``(10, 4)`` labelled retrieved pairs per bucket and stars: the ``extra_counts`` of other arrays."""
    bucket = _bucket(arrays)
    labelled = ~arrays.unknown & (bucket >= 0)
    counts = np.zeros((_BUCKETS * 2, STARS.size))
    np.add.at(counts, (bucket[labelled], arrays.labels[labelled].astype(np.int64)), 1.0)
    return counts


def expected_gain(probs: NDArray[np.float64], gain_values: NDArray[np.float64]) -> NDArray[np.float64]:
    """``E[g] = sum_s P(s) g(s)`` per pair."""
    return probs @ gain_values
