"""Is a change real?  Bootstrap confidence intervals and a paired randomization test.

All functions take per-question values (e.g. NDCG@10 of each question).  ``NaN`` marks a question
where the metric is undefined (no known good answer): :func:`bootstrap_ci` drops those questions, and
:func:`compare_runs` drops every *pair* where either run is ``NaN`` (both means, the difference and the
test then use the same questions).  Results are deterministic given ``seed``.

Methods:

* Bootstrap CI (percentile method): draw ``n_resamples`` samples of ``n`` questions with replacement,
  take each sample's mean, report the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles.
* Paired randomization (sign-flip permutation) test of ``H0: the runs are exchangeable per
  question``: with ``d_q = a_q - b_q``, the statistic is ``|mean(d)|``; each permutation flips the sign
  of every ``d_q`` independently with probability 1/2.  ``p = (1 + #{|mean(s * d)| >= |mean(d)|}) /
  (1 + n_permutations)`` (never 0; exactly 1 for identical runs).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = [
    "ConfidenceInterval",
    "PairedComparison",
    "Verdict",
    "bootstrap_ci",
    "compare_runs",
    "paired_randomization_test",
    "verdict",
]

Verdict = Literal["real improvement", "within noise", "real drop"]

#: Random draws per vectorised block (bounds memory: block rows x questions).
BLOCK_ELEMENTS = 4_000_000


@dataclass(frozen=True)
class ConfidenceInterval:
    """Mean over questions with its bootstrap confidence interval."""

    mean: float
    low: float
    high: float
    n: int
    confidence: float


@dataclass(frozen=True)
class PairedComparison:
    """Comparison of run A against run B on the same questions (``difference = mean_a - mean_b``).

    ``n`` is the number of questions used; ``n_dropped`` the questions left out because either value
    was undefined (NaN).  ``ci_low``/``ci_high``: bootstrap CI of the difference.  ``p_value``: paired
    randomization test (two-sided).
    """

    mean_a: float
    mean_b: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    n: int
    n_dropped: int = 0
    confidence: float = 0.95

    def verdict(self, alpha: float = 0.05) -> Verdict:
        """See :func:`verdict`."""
        return verdict(self, alpha)


def _as_values(values: ArrayLike, name: str) -> NDArray[np.float64]:
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numbers: {exc}") from None
    if array.ndim != 1:
        raise ValueError(f"{name} must be 1-D (one value per question), got shape {array.shape}")
    if np.isinf(array).any():
        raise ValueError(f"{name} contains an infinite value")
    return array


def _check_count(value: int, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_confidence(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1, got {confidence!r}")
    return float(confidence)


def _bootstrap_means(values: NDArray[np.float64], n_resamples: int, rng: np.random.Generator) -> NDArray:
    n = values.size
    means = np.empty(n_resamples, dtype=np.float64)
    block = max(1, BLOCK_ELEMENTS // n)
    for start in range(0, n_resamples, block):
        stop = min(n_resamples, start + block)
        idx = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = values[idx].mean(axis=1)
    return means


def bootstrap_ci(
    values: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> ConfidenceInterval:
    """Percentile bootstrap confidence interval of the mean over questions (NaN values dropped).

    With no defined value the mean and bounds are NaN; with one value the interval is that value.
    """
    confidence = _check_confidence(confidence)
    n_resamples = _check_count(n_resamples, "n_resamples", 1)
    array = _as_values(values, "values")
    array = array[~np.isnan(array)]
    if array.size == 0:
        return ConfidenceInterval(math.nan, math.nan, math.nan, 0, confidence)
    mean = float(array.mean())
    means = _bootstrap_means(array, n_resamples, np.random.default_rng(seed))
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    # Guard against rounding pushing a degenerate interval past the mean.
    return ConfidenceInterval(
        mean, min(float(low), mean), max(float(high), mean), int(array.size), confidence
    )


def paired_randomization_test(
    a: ArrayLike, b: ArrayLike, *, n_permutations: int = 10_000, seed: int | None = 0
) -> float:
    """Two-sided p-value of the paired sign-flip randomization test (pairs with a NaN are dropped)."""
    n_permutations = _check_count(n_permutations, "n_permutations", 1)
    a_values, b_values = _paired(a, b)
    keep = ~(np.isnan(a_values) | np.isnan(b_values))
    return _randomization_p(a_values[keep] - b_values[keep], n_permutations, np.random.default_rng(seed))


def _paired(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    a_values = _as_values(a, "a")
    b_values = _as_values(b, "b")
    if a_values.shape != b_values.shape:
        raise ValueError(f"a has {a_values.size} questions but b has {b_values.size}; they must be paired")
    return a_values, b_values


def _randomization_p(diff: NDArray[np.float64], n_permutations: int, rng: np.random.Generator) -> float:
    n = diff.size
    if n == 0:
        return math.nan
    observed = abs(diff.sum())
    # Tolerance so permutations equal to the observed statistic up to rounding count as ">=".
    tolerance = 1e-9 * max(1.0, float(np.abs(diff).sum()))
    total = float(diff.sum())
    at_least = 0
    block = max(1, BLOCK_ELEMENTS // n)
    for start in range(0, n_permutations, block):
        rows = min(block, n_permutations - start)
        # A random bit per (permutation, question): bit 1 keeps the sign, bit 0 flips it, so the
        # permuted sum is 2 * sum(kept) - sum(all).
        bits = rng.integers(0, 2, size=(rows, n), dtype=np.int8)
        permuted = 2.0 * (bits.astype(np.float64) @ diff) - total
        at_least += int((np.abs(permuted) >= observed - tolerance).sum())
    return (1 + at_least) / (1 + n_permutations)


def compare_runs(
    a: ArrayLike,
    b: ArrayLike,
    *,
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    n_permutations: int = 10_000,
    seed: int | None = 0,
) -> PairedComparison:
    """Compare run A with run B on the same questions (``a[q]`` and ``b[q]`` are the same question).

    Pairs where either value is NaN are dropped.  Returns the two means, their difference (A - B), the
    percentile bootstrap CI of the difference (questions resampled as pairs) and the paired
    randomization test p-value.  With no usable pair every number is NaN.
    """
    confidence = _check_confidence(confidence)
    n_resamples = _check_count(n_resamples, "n_resamples", 1)
    n_permutations = _check_count(n_permutations, "n_permutations", 1)
    a_values, b_values = _paired(a, b)
    keep = ~(np.isnan(a_values) | np.isnan(b_values))
    a_values, b_values = a_values[keep], b_values[keep]
    n = int(a_values.size)
    dropped = int(keep.size - n)
    if n == 0:
        nan = math.nan
        return PairedComparison(nan, nan, nan, nan, nan, nan, 0, dropped, confidence)
    diff = a_values - b_values
    rng = np.random.default_rng(seed)
    ci_rng, test_rng = rng.spawn(2)
    mean_diff = float(diff.mean())
    means = _bootstrap_means(diff, n_resamples, ci_rng)
    alpha = (1 - confidence) / 2
    low, high = np.quantile(means, [alpha, 1 - alpha])
    return PairedComparison(
        mean_a=float(a_values.mean()),
        mean_b=float(b_values.mean()),
        difference=mean_diff,
        ci_low=min(float(low), mean_diff),
        ci_high=max(float(high), mean_diff),
        p_value=_randomization_p(diff, n_permutations, test_rng),
        n=n,
        n_dropped=dropped,
        confidence=confidence,
    )


def verdict(comparison: PairedComparison, alpha: float = 0.05) -> Verdict:
    """``"real improvement"`` / ``"real drop"`` when ``p_value < alpha`` and A is better / worse than B,
    else ``"within noise"`` (also when the p-value is undefined)."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    if math.isnan(comparison.p_value) or comparison.p_value >= alpha or comparison.difference == 0:
        return "within noise"
    return "real improvement" if comparison.difference > 0 else "real drop"
