"""Coordinate ascent on mean NDCG@k (Metzler & Croft 2007): the objective (NDCG@k over rated candidates,
or judged-only NDCG@k of each top k), the line search over the weights, the best of several starts, and
the questions of a bootstrap sample."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rankers.fusion.groups import FloatArray, _group_ids, _padded
from rankers.fusion.ndcg import _ndcg_matrix


def _l1(w: FloatArray) -> FloatArray:
    total = np.abs(w).sum()
    return w / total if total > 0 else w


def _judged_top_k_matrix(
    score_matrix: FloatArray, gain_padded: FloatArray, known_padded: FloatArray, ideal: FloatArray, k: int
) -> FloatArray:
    """Judged-only NDCG@k of each scoring's top k (``_ndcg_matrix``'s shapes): the k best candidates of
    all, unrated ones (``known_padded`` 0) then removed and the rated ones discounted by their place among
    the rated: ``trec_eval -J`` on a run of depth k, the champion/challenger test's measure."""
    top = min(k, score_matrix.shape[-1])
    order = np.argsort(-score_matrix, axis=-1, kind="stable")[..., :top]
    shape = score_matrix.shape
    gains = np.take_along_axis(np.broadcast_to(gain_padded, shape), order, axis=-1)
    known = np.take_along_axis(np.broadcast_to(known_padded, shape), order, axis=-1)
    place = np.cumsum(known, axis=-1)  # 1-based place among the rated answers of the top k
    dcg = (gains * known / np.log2(np.maximum(place, 1.0) + 1.0)).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(ideal > 0, dcg / np.where(ideal > 0, ideal, 1.0), np.nan)


class _Objective:
    """Mean NDCG@k over the training questions of a weight vector (or of many at once).

    ``known`` (one flag per row): the rows are all candidates and the measure is judged-only NDCG@k of
    each top k (``_judged_top_k_matrix``); None: the rows are rated candidates only, plain NDCG@k.
    """

    def __init__(
        self,
        z: FloatArray,
        gains: FloatArray,
        sizes: NDArray[np.int64],
        ideal: FloatArray,
        k: int,
        known: NDArray[np.bool_] | None = None,
    ):
        keep = ideal > 0  # undefined NDCG teaches nothing and would only be NaN in the mean
        ids = _group_ids(sizes)
        rows = keep[ids]
        self.sizes = sizes[keep]
        self.ideal = ideal[keep]
        self.k = k
        self.known_padded = (
            None if known is None else _padded(known[rows].astype(np.float64), self.sizes, 0.0)
        )
        self.gain_padded = _padded(np.nan_to_num(gains[rows]), self.sizes, 0.0)
        # (features, groups, width): each feature laid out per question; padding -inf so it sorts last.
        z = z[rows]
        self.z_padded = np.stack([_padded(z[:, f], self.sizes, 0.0) for f in range(z.shape[1])])
        self.pad = _padded(np.zeros(len(z)), self.sizes, -np.inf)
        self.count = int(keep.sum())

    def many(self, weights: FloatArray) -> FloatArray:
        """Mean NDCG for each row of ``weights`` (candidates, features)."""
        if self.count == 0:
            return np.zeros(len(weights))
        # einsum, not tensordot: a (few x f) @ (f x many) BLAS product is ~10x slower here.
        scores = np.einsum("tf,fgw->tgw", weights, self.z_padded) + self.pad
        if self.known_padded is not None:
            return _judged_top_k_matrix(scores, self.gain_padded, self.known_padded, self.ideal, self.k).mean(
                axis=1
            )
        return _ndcg_matrix(scores, self.gain_padded, self.ideal, self.k).mean(axis=1)

    def __call__(self, w: FloatArray) -> float:
        return float(self.many(w[None])[0])


#: Coordinate ascent's line search: each weight is tried at its value plus each of these steps
#: (weights have L1 norm 1, so this covers small refinements up to turning a feature's sign).
_STEPS = np.array([0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0])
_STEPS = np.concatenate([-_STEPS[::-1], _STEPS])


def _coordinate_ascent(
    objective: _Objective, start: FloatArray, *, max_rounds: int, tolerance: float, nonnegative: bool = False
) -> tuple[FloatArray, float, int]:
    """``nonnegative``: every trial weight is clipped at 0 before rescaling (weights stay >= 0)."""
    w = _l1(np.maximum(start, 0.0) if nonnegative else start.astype(np.float64))
    best = objective(w)
    rounds = 0
    for rounds in range(1, max_rounds + 1):  # noqa: B007 (rounds is reported)
        before = best
        for f in range(len(w)):
            trial = np.repeat(w[None], len(_STEPS), axis=0)
            trial[:, f] += _STEPS
            if nonnegative:
                np.maximum(trial, 0.0, out=trial)
            trial /= np.maximum(np.abs(trial).sum(axis=1, keepdims=True), 1e-12)
            values = objective.many(trial)
            # Prefer the smallest move among equally good ones (NDCG is flat between rank swaps).
            ties = np.flatnonzero(values >= values.max() - 1e-12)
            i = int(ties[np.argmin(np.abs(_STEPS[ties]))])
            if values[i] > best + 1e-12:
                w, best = trial[i], float(values[i])
        if best - before <= tolerance:
            break
    return w, best, rounds


def _best_of_starts(
    objective: _Objective,
    first: FloatArray,
    rng: np.random.Generator,
    *,
    restarts: int,
    max_rounds: int,
    tolerance: float,
    nonnegative: bool = False,
) -> tuple[FloatArray, float, int, list[float]]:
    """Coordinate ascent from ``first`` and ``restarts`` random points; the best (earliest on a tie)."""
    f = len(first)
    starts = [first] + [rng.uniform(-0.2, 1.0, size=f) for _ in range(max(restarts, 0))]
    best: tuple[FloatArray, float, int] | None = None
    tried = []
    for s in starts:
        result = _coordinate_ascent(
            objective, s, max_rounds=max_rounds, tolerance=tolerance, nonnegative=nonnegative
        )
        tried.append(round(result[1], 6))
        if best is None or result[1] > best[1] + 1e-12:
            best = result
    assert best is not None
    return best[0], best[1], best[2], tried


def _pick_groups(
    z: FloatArray, gains: FloatArray, sizes: NDArray[np.int64], ideal: FloatArray, picks: NDArray[np.int64]
) -> tuple[FloatArray, FloatArray, NDArray[np.int64], FloatArray]:
    """The questions at ``picks`` (repeats allowed), as (z, gains, sizes, ideal)."""
    offsets = np.cumsum(sizes) - sizes
    rows = np.concatenate([np.arange(offsets[p], offsets[p] + sizes[p]) for p in picks] or [np.zeros(0, int)])
    return z[rows], gains[rows], sizes[picks], ideal[picks]
