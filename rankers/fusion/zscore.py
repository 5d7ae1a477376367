"""Per-question z-scores of each signal and the untrained fusion (their equal-weight sum)."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rankers.fusion.groups import FloatArray, _as_matrix, _group_ids, check_groups

#: The untrained fusion's signals and weights, as a version stores them (``params``).
FUSION_SIGNALS = ("bm25", "cosine")
UNTRAINED_FUSION_WEIGHTS = (0.5, 0.5)


def zscore_by_group(values: ArrayLike, groups: ArrayLike) -> FloatArray:
    """Per-question z-scores of each signal: ``(x - group mean) / group std`` (population std).

    ``values``: shape (n,) or (n, signals). A group whose values are all equal (std below 1e-12 times
    the values' scale) gets 0 for every row. Returns float64 of the same shape.
    """
    matrix, flat = _as_matrix(values, "values")
    sizes = check_groups(groups, len(matrix))
    out = np.zeros_like(matrix)
    if len(matrix) == 0:
        return out[:, 0] if flat else out
    ids = _group_ids(sizes)
    counts = np.maximum(sizes, 1).astype(np.float64)
    for column in range(matrix.shape[1]):
        x = matrix[:, column]
        mean = np.bincount(ids, weights=x, minlength=len(sizes)) / counts
        centred = x - mean[ids]
        std = np.sqrt(np.bincount(ids, weights=centred**2, minlength=len(sizes)) / counts)
        scale = np.bincount(ids, weights=np.abs(x), minlength=len(sizes)) / counts
        usable = std > 1e-12 * np.maximum(scale, 1e-300)
        divisor = np.where(usable, std, 1.0)
        out[:, column] = np.where(usable[ids], centred / divisor[ids], 0.0)
    return out[:, 0] if flat else out


def untrained_fusion(bm25: ArrayLike, cosine: ArrayLike, groups: ArrayLike) -> FloatArray:
    """``z(bm25) + z(cosine)`` per question: lexical and semantic evidence with equal weights, no labels."""
    b = np.asarray(bm25, dtype=np.float64)
    c = np.asarray(cosine, dtype=np.float64)
    if b.ndim != 1 or b.shape != c.shape:
        raise ValueError("bm25 and cosine must be 1-d arrays of the same length")
    return zscore_by_group(np.column_stack([b, c]), groups).sum(axis=1)
