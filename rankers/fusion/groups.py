"""Candidates of many questions as one array plus ``groups`` (sizes): checking and laying them out."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

FloatArray = NDArray[np.float64]


def check_groups(groups: ArrayLike, n: int) -> NDArray[np.int64]:
    """``groups`` as an int array of non-negative sizes adding up to ``n``; ValueError otherwise."""
    sizes = np.asarray(groups)
    if sizes.ndim != 1:
        raise ValueError("groups must be a 1-d sequence of group sizes")
    whole = np.issubdtype(sizes.dtype, np.integer) or (
        np.all(np.isfinite(sizes)) and np.all(sizes == np.round(sizes))
    )
    if sizes.size and not whole:
        raise ValueError("groups must be whole numbers")
    sizes = sizes.astype(np.int64)
    if np.any(sizes < 0):
        raise ValueError("group sizes must be >= 0")
    if int(sizes.sum()) != n:
        raise ValueError(f"group sizes add up to {int(sizes.sum())}, but there are {n} rows")
    return sizes


def _group_ids(sizes: NDArray[np.int64]) -> NDArray[np.int64]:
    return np.repeat(np.arange(len(sizes)), sizes)


def _as_matrix(values: ArrayLike, name: str) -> tuple[FloatArray, bool]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim not in (1, 2):
        raise ValueError(f"{name} must be 1-d (one signal) or 2-d (rows x signals)")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite (no NaN or infinity)")
    return (array[:, None], True) if array.ndim == 1 else (array, False)


def _padded(values: FloatArray, sizes: NDArray[np.int64], fill: float) -> FloatArray:
    """Rows of a 1-d array laid out as a (groups, longest group) matrix, ``fill`` beyond each group."""
    width = int(sizes.max(initial=0))
    out = np.full((len(sizes), width), fill, dtype=np.float64)
    columns = np.arange(len(values)) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    out[_group_ids(sizes), columns] = values
    return out
