"""Holm's step-down correction for comparing several pairs of runs at once.

Comparing N runs pairwise makes ``m = N(N − 1)/2`` tests; at α = 0.05 each, some pair would look
"significant" by chance alone. Holm (1979) controls the family-wise error rate (the chance of even one
false "real" verdict among the m) at α, and is uniformly more powerful than Bonferroni.

Formula (adjusted p-values): sort the m p-values ascending, ``p_(1) ≤ … ≤ p_(m)``; then

    p̃_(i) = min(1, max_{j ≤ i} (m − j + 1) · p_(j))

and the i-th hypothesis is rejected at level α when ``p̃_(i) < α`` (the same as Holm's procedure:
reject while ``p_(i) < α / (m − i + 1)``, stop at the first that is not). Ties keep their input order
(a stable sort), which does not change any adjusted value. Undefined p-values (NaN: a pair with no
question in common) are left out of ``m`` and stay NaN.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["holm_adjust"]


def holm_adjust(p_values: ArrayLike) -> NDArray[np.float64]:
    """Holm-adjusted p-values, in the order given (see the module docstring for the formula).

    ValueError for input that is not a flat list of numbers in [0, 1] (NaN allowed: left as NaN).
    """
    try:
        p = np.asarray(p_values, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("p_values must be numbers") from None
    if p.ndim != 1:
        raise ValueError(f"p_values must be a flat list, got {p.ndim} dimensions")
    defined = ~np.isnan(p)
    if np.any((p[defined] < 0) | (p[defined] > 1)):
        raise ValueError("p_values must be between 0 and 1")
    adjusted = np.full(p.shape, np.nan)
    values = p[defined]
    m = values.size
    if m == 0:
        return adjusted
    order = np.argsort(values, kind="stable")
    factors = m - np.arange(m)  # m, m − 1, …, 1 for the sorted p-values
    stepped = np.minimum(1.0, np.maximum.accumulate(factors * values[order]))
    result = np.empty(m)
    result[order] = stepped
    adjusted[defined] = result
    return adjusted
