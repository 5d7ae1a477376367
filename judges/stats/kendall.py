r"""Kendall's tau-b between two orderings of the same systems (pure numpy).

Over all pairs i < j of n systems, with x and y their scores under two sets of labels:

    concordant n_c: sign(x_i − x_j) · sign(y_i − y_j) > 0        discordant n_d: < 0
    n_0 = n(n − 1)/2, n_1 = Σ_ties-in-x t(t − 1)/2, n_2 = Σ_ties-in-y u(u − 1)/2

    τ_b = (n_c − n_d) / sqrt((n_0 − n_1)(n_0 − n_2))

1: the judge's labels order the systems (versions, rankers) as people's do; −1: reversed. Clarke and
Dietz (2024) report τ ≈ 0.84–0.89 for LLM judges on TREC. Undefined (ValueError) with fewer than two
systems or when either side ties every system.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike


def kendall_tau_b(x: ArrayLike, y: ArrayLike) -> float:
    """τ_b of the scores ``x`` and ``y`` of the same systems."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError("x and y must be one-dimensional and of the same length")
    if a.size < 2:
        raise ValueError("Kendall's tau needs at least two systems")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("scores must be finite")
    i, j = np.triu_indices(a.size, k=1)
    sx, sy = np.sign(a[i] - a[j]), np.sign(b[i] - b[j])
    n0 = len(i)
    n1 = int(np.count_nonzero(sx == 0))  # pairs tied in x (Σ t(t−1)/2)
    n2 = int(np.count_nonzero(sy == 0))
    denominator = np.sqrt(float(n0 - n1) * float(n0 - n2))
    if denominator == 0:
        raise ValueError("Kendall's tau is undefined when one side ties every system")
    return float(np.sum(sx * sy)) / float(denominator)


ROWS_A_BLOCK = 512


def kendall_tau_b_items(x: ArrayLike, y: ArrayLike) -> float | None:
    """τ_b of two gradings of many items (e.g. people's stars and a click figure of the same pairs), by
    the formula above, the n(n − 1)/2 pairs taken ``ROWS_A_BLOCK`` rows at a time so that memory stays
    O(n); None when undefined (fewer than two items, or one side ties everything)."""
    a, b = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape:
        raise ValueError("x and y must be one-dimensional and of the same length")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("scores must be finite")
    n = a.size
    score = tied_x = tied_y = 0
    for start in range(0, n, ROWS_A_BLOCK):
        rows = np.arange(start, min(start + ROWS_A_BLOCK, n))
        later = np.arange(n)[None, :] > rows[:, None]
        sx = np.sign(a[rows, None] - a[None, :])
        sy = np.sign(b[rows, None] - b[None, :])
        score += int(np.sum((sx * sy)[later]))
        tied_x += int(np.count_nonzero((sx == 0) & later))
        tied_y += int(np.count_nonzero((sy == 0) & later))
    n0 = n * (n - 1) // 2
    denominator = np.sqrt(float(n0 - tied_x) * float(n0 - tied_y))
    return None if denominator == 0 else float(score) / float(denominator)
