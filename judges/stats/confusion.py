r"""The confusion matrix of two graders on the same items (pure numpy).

    C[i, j] = #{items : the first grader (people) gave i and the second (the judge) gave j}

for grades 0 … levels − 1; rows are the first grader's grades, columns the second's. Its diagonal is
where they agree; mass above the diagonal is where the judge was more lenient.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def grades(values: ArrayLike, levels: int, name: str) -> NDArray[np.int64]:
    """``values`` as whole-number grades 0 … levels − 1, or ValueError naming ``name``."""
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be a one-dimensional sequence of grades")
    if not np.all(np.isfinite(array)) or not np.all(array == np.round(array)):
        raise ValueError(f"{name} must hold whole-number grades")
    if array.size and (array.min() < 0 or array.max() > levels - 1):
        raise ValueError(f"{name} must hold grades from 0 to {levels - 1}")
    return array.astype(np.int64)


def confusion_matrix(first: ArrayLike, second: ArrayLike, levels: int = 4) -> NDArray[np.int64]:
    """(levels × levels) counts: row = the first grader's grade, column = the second's."""
    if levels < 2:
        raise ValueError("levels must be at least 2")
    a, b = grades(first, levels, "first"), grades(second, levels, "second")
    if a.shape != b.shape:
        raise ValueError(f"got {a.size} and {b.size} grades; both graders must grade the same items")
    return np.bincount(a * levels + b, minlength=levels * levels).reshape(levels, levels)
