"""The pairwise logistic fit: RankNet with a linear scorer, an L2 penalty, solved by Newton's method."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from rankers.fusion.groups import FloatArray


def _pairwise_logistic(
    z: FloatArray,
    gains: FloatArray,
    sizes: NDArray[np.int64],
    *,
    l2: float,
    max_iterations: int = 50,
) -> tuple[FloatArray, dict]:
    """Minimise ``sum_p d_p log(1 + exp(-w . (z_i - z_j))) / sum_p d_p + l2/2 |w|^2`` by Newton's method.

    Pairs ``p = (i, j)``: two candidates of the same question with ``g_i > g_j``; ``d_p = g_i - g_j``.
    """
    offsets = np.cumsum(sizes) - sizes
    firsts, seconds = [], []
    for g in np.flatnonzero(sizes > 1):
        local = gains[offsets[g] : offsets[g] + sizes[g]]
        i, j = np.nonzero(local[:, None] > local[None, :])
        firsts.append(i + offsets[g])
        seconds.append(j + offsets[g])
    if not firsts or sum(len(a) for a in firsts) == 0:
        return np.zeros(z.shape[1]), {"pairs": 0, "iterations": 0}
    i = np.concatenate(firsts)
    j = np.concatenate(seconds)
    diff = z[i] - z[j]
    weight = gains[i] - gains[j]
    weight = weight / weight.sum()
    w = np.zeros(z.shape[1])
    eye = np.eye(z.shape[1])
    iterations = 0
    for iterations in range(1, max_iterations + 1):  # noqa: B007
        margin = diff @ w
        p = 0.5 * (1 + np.tanh(-margin / 2))  # sigmoid(-margin), overflow-free
        grad = -(diff.T @ (weight * p)) + l2 * w
        hess = (diff.T * (weight * p * (1 - p))) @ diff + l2 * eye
        step = np.linalg.solve(hess, grad)
        w = w - step
        if np.abs(step).max() < 1e-10:
            break
    return w, {"pairs": len(i), "iterations": iterations}
