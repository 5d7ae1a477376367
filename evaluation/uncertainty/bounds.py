"""Exact lower and upper bounds of NDCG@k when some answers in the top k are unlabelled.

Pure numpy. For one run of :class:`~evaluation.uncertainty.pairs.JudgingArrays`, the ``u`` unlabelled
answers in question ``q``'s top k may each get any of the stars 0–3; unlabelled answers *outside* the
run's top k count as not relevant (the convention of pooled test collections: the ideal DCG is built
from what is known or retrieved). With the known part of the top k giving ``A = sum g(l_i) / d(i)``:

    NDCG_q(v) = (A + sum_j g(v_j) / d(p_j)) / IDCG(known labels ∪ {v_1..v_u})

Raising one unlabelled answer's stars raises DCG but may raise the ideal DCG more, so NDCG is not
monotone in any one unknown: the bounds are *not* "all unknown = 0" and "all unknown = 3" (e.g. a
question whose only known label is 1 star at rank 1 has NDCG 1.0 with an unknown rank-10 answer at
0 stars, and 0.514 with it at 3 stars: the bound is attained at 3 stars).

**Method (exact).** IDCG depends only on the *multiset* of values given to the unknowns, not on which
answer gets which. For a fixed multiset, DCG is largest when the largest gains sit at the best ranks
and smallest when they sit at the worst (rearrangement inequality: with gains sorted descending,
``sum g_j w_j`` is maximal for weights sorted descending and minimal for weights sorted ascending).
So ``max NDCG = max over multisets of (A + g_desc · w_desc) / IDCG`` and ``min NDCG = min over
multisets of (A + g_desc · w_asc) / IDCG``: an enumeration of the ``C(u + 3, 3)`` multisets of four
star values (286 for ``u = 10``), not of all ``4^u`` assignments.

A question is *undefined* (no NDCG) when IDCG = 0. Per question the bounds are taken over the
assignments where it is defined; ``always_defined`` / ``possibly_defined`` say which assignments those
are. The bounds of the **mean** over defined questions (:func:`mean_bounds`) are exact too: questions
defined under every assignment contribute their bound; a question defined only for some assignments
(no known good answer, unknowns in its top k) may be left out or included at its bound, and the best
set to include is a prefix of those questions sorted by their bound (including a value moves the mean
toward it, so for the maximum one includes the highest values first, and symmetrically), so trying
every prefix length finds the exact extreme.
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from rankers.ndcg import gains

from .pairs import JudgingArrays

__all__ = ["MeanBounds", "NdcgBounds", "mean_bounds", "ndcg_bounds"]


@dataclass(frozen=True)
class NdcgBounds:
    """Per-question bounds (``(Q,)`` arrays, NaN where the question can never be defined)."""

    low: NDArray[np.float64]
    high: NDArray[np.float64]
    always_defined: NDArray[np.bool_]
    possibly_defined: NDArray[np.bool_]
    unknown_in_top_k: NDArray[np.int64]


@dataclass(frozen=True)
class MeanBounds:
    """Bounds of the mean NDCG@k over the questions where it is defined (NaN when none can be)."""

    low: float
    high: float
    unknown_in_top_k: int


@functools.lru_cache(maxsize=64)
def _multisets(u: int) -> NDArray[np.float64]:
    """All multisets of ``u`` star values, each row sorted descending: shape ``(C(u+3, 3), u)``."""
    rows = list(itertools.combinations_with_replacement((3.0, 2.0, 1.0, 0.0), u))
    return np.array(rows, dtype=np.float64).reshape(len(rows), u)


def ndcg_bounds(arrays: JudgingArrays, run: int = 0) -> NdcgBounds:
    """Exact per-question min and max of NDCG@k of ``run`` over the stars of its unlabelled top-k answers."""
    if not 0 <= run < arrays.n_runs:
        raise ValueError(f"run must be between 0 and {arrays.n_runs - 1}, got {run}")
    k = arrays.k
    w = arrays.weights()
    top = arrays.run_pairs[run]  # (Q, k)
    labels_pad = np.append(arrays.labels, 0.0)  # index -1: no answer, no gain
    top_labels = labels_pad[top]
    unknown_top = (top >= 0) & np.isnan(top_labels)
    known_dcg = (gains(np.where(unknown_top, 0.0, top_labels), arrays.gain) * w).sum(axis=1)
    n_q = arrays.n_questions
    low = np.full(n_q, np.nan)
    high = np.full(n_q, np.nan)
    always = np.zeros(n_q, dtype=bool)
    possibly = np.zeros(n_q, dtype=bool)
    u_count = unknown_top.sum(axis=1)
    q_pairs = arrays.question_pairs
    known_gain_rows = gains(np.nan_to_num(np.append(arrays.labels, np.nan)[q_pairs], nan=0.0), arrays.gain)
    for u in np.unique(u_count):
        qs = np.flatnonzero(u_count == u)
        sets = gains(_multisets(int(u)), arrays.gain)  # (m, u), descending
        m = sets.shape[0]
        # Ideal DCG of known gains together with each multiset: (len(qs), m).
        known = np.broadcast_to(known_gain_rows[qs][:, None, :], (qs.size, m, known_gain_rows.shape[1]))
        pool = np.concatenate([known, np.broadcast_to(sets, (qs.size, m, int(u)))], axis=2)
        width = min(k, pool.shape[2])
        idcg = (-np.sort(-pool, axis=2)[:, :, :width] * w[:width]).sum(axis=2)
        # The unknowns' rank weights, best rank first, per question.
        wu = np.where(unknown_top[qs], w, np.nan)
        w_desc = -np.sort(-wu, axis=1)[:, : int(u)]  # NaN sort last after negation
        w_asc = w_desc[:, ::-1]
        dcg_max = known_dcg[qs][:, None] + w_desc @ sets.T  # (len(qs), m)
        dcg_min = known_dcg[qs][:, None] + w_asc @ sets.T
        defined = idcg > 0
        with np.errstate(invalid="ignore", divide="ignore"):
            hi = np.where(defined, dcg_max / np.where(defined, idcg, 1.0), -np.inf)
            lo = np.where(defined, dcg_min / np.where(defined, idcg, 1.0), np.inf)
        any_defined = defined.any(axis=1)
        high[qs] = np.where(any_defined, hi.max(axis=1), np.nan)
        low[qs] = np.where(any_defined, lo.min(axis=1), np.nan)
        always[qs] = defined.all(axis=1)
        possibly[qs] = any_defined
    return NdcgBounds(low, high, always, possibly, u_count.astype(np.int64))


def _extreme_mean(fixed: NDArray[np.float64], optional: NDArray[np.float64], largest: bool) -> float:
    """Max (``largest``) or min of the mean of ``fixed`` plus any subset of ``optional``."""
    ordered = -np.sort(-optional) if largest else np.sort(optional)
    sums = fixed.sum() + np.concatenate([[0.0], np.cumsum(ordered)])
    counts = fixed.size + np.arange(ordered.size + 1)
    valid = counts > 0
    if not valid.any():
        return math.nan
    means = sums[valid] / counts[valid]
    return float(means.max() if largest else means.min())


def mean_bounds(bounds: NdcgBounds) -> MeanBounds:
    """Exact bounds of the mean NDCG@k over defined questions (see the module docstring)."""
    fixed = bounds.always_defined
    optional = bounds.possibly_defined & ~bounds.always_defined
    return MeanBounds(
        low=_extreme_mean(bounds.low[fixed], bounds.low[optional], largest=False),
        high=_extreme_mean(bounds.high[fixed], bounds.high[optional], largest=True),
        unknown_in_top_k=int(bounds.unknown_in_top_k.sum()),
    )
