"""NDCG@k of scored candidates by question (``rankers.ndcg``'s), many weight vectors at once for the fit."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankers.fusion.groups import FloatArray, _padded, check_groups
from rankers.ndcg import dcg_at_k, ideal_dcg_at_k, safe_divide


def _discounts(k: int) -> FloatArray:
    return 1.0 / np.log2(np.arange(2, k + 2, dtype=np.float64))


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive int, got {k!r}")
    return int(k)


def ideal_dcg_from_labels(labels: Iterable[Iterable[float]], k: int = 10) -> FloatArray:
    """IDCG@k of each question from all its labels (stars of every labelled answer, any order)."""
    k = _check_k(k)
    discounts = _discounts(k)
    out = []
    for question in labels:
        stars = np.sort(np.asarray(list(question), dtype=np.float64))[::-1][:k]
        if np.any(stars < 0) or not np.all(np.isfinite(stars)):
            raise ValueError("labels must be finite and >= 0")
        out.append(float(stars @ discounts[: len(stars)]))
    return np.asarray(out, dtype=np.float64)


def rank_within_groups(scores: ArrayLike, groups: ArrayLike) -> list[NDArray[np.int64]]:
    """For each question, its rows' indices (into ``scores``) best first; ties keep input order."""
    s = np.asarray(scores, dtype=np.float64)
    sizes = check_groups(groups, len(s))
    offsets = np.cumsum(sizes) - sizes
    return [
        offsets[g] + np.argsort(-s[offsets[g] : offsets[g] + sizes[g]], kind="stable")
        for g in range(len(sizes))
    ]


def _ndcg_matrix(score_matrix: FloatArray, gain_padded: FloatArray, ideal: FloatArray, k: int) -> FloatArray:
    """NDCG@k for several scorings at once: ``score_matrix`` (scorings, groups, width) -> (scorings, groups).

    The coordinate ascent's objective: :func:`scored_ndcg_at_k`'s figure, batched over weight vectors and summed
    as dot products (``ideal`` from ``ideal_dcg_from_labels``, summed alike, so a perfect order is 1.0).
    Padding must hold -inf scores (so it sorts last) and 0 gains.
    """
    top = min(k, score_matrix.shape[-1])
    order = np.argsort(-score_matrix, axis=-1, kind="stable")[..., :top]
    gains = np.take_along_axis(np.broadcast_to(gain_padded, score_matrix.shape), order, axis=-1)
    dcg = gains @ _discounts(k)[:top]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), np.nan)


def scored_ndcg_at_k(
    scores: ArrayLike,
    gains: ArrayLike,
    groups: ArrayLike,
    k: int = 10,
    ideal_dcg: ArrayLike | None = None,
) -> FloatArray:
    """NDCG@k of each question (module docstring): candidates sorted by ``scores``, ties by input order.

    ``gains``: the stars of each candidate (0 when unlabelled). ``ideal_dcg``: IDCG@k of each question
    from all its labels; when omitted, from the candidates' own gains. NaN where IDCG is 0.
    """
    k = _check_k(k)
    s = np.asarray(scores, dtype=np.float64)
    g = np.asarray(gains, dtype=np.float64)
    if s.ndim != 1 or s.shape != g.shape:
        raise ValueError("scores and gains must be 1-d arrays of the same length")
    if not np.all(np.isfinite(s)) or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise ValueError("scores must be finite; gains finite and >= 0")
    sizes = check_groups(groups, len(s))
    if ideal_dcg is not None:
        ideal = np.asarray(ideal_dcg, dtype=np.float64)
        if ideal.shape != sizes.shape or np.any(ideal < 0) or not np.all(np.isfinite(ideal)):
            raise ValueError("ideal_dcg must hold one finite value >= 0 per group")
    if len(sizes) == 0:
        return np.zeros(0)
    # Each question's stars in score order (ties by input order), NaN past its last candidate.
    stars = _padded(g, sizes, np.nan)
    order = np.argsort(-_padded(s, sizes, -np.inf), axis=1, kind="stable")
    dcg = dcg_at_k(np.take_along_axis(stars, order, axis=1), k)
    if ideal_dcg is None:
        ideal = ideal_dcg_at_k(stars, k)
    return safe_divide(dcg, ideal)


def mean_ndcg(values: ArrayLike) -> float:
    """Mean over the questions where NDCG is defined (NaN when none is)."""
    v = np.asarray(values, dtype=np.float64)
    defined = v[~np.isnan(v)]
    return float(defined.mean()) if defined.size else float("nan")
