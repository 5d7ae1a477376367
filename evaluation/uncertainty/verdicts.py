"""Would rating the rest change the verdict? The compare page's verdict under every completion of the labels.

Pure numpy. The verdict of a challenger against its champion is the compare page's
(:func:`evaluation.metrics.stats.verdict`): a paired sign-flip randomization test on the per-question
NDCG@k differences, "real improvement" / "real drop" when ``p < alpha`` (by the sign of the mean
difference), else "within noise". With unrated answers in the top k there is no single verdict: each
draw ``s`` of the unrated pairs' stars (:func:`~evaluation.uncertainty.sample_stars`) gives per-question
differences ``d_sq`` (questions undefined in the draw left out) and so a verdict ``v_s``. Then

    share(v) = #{s : v_s = v} / S

is the chance that rating every unrated pair ends in verdict ``v``, as far as the relevance model knows.
The verdict is **settled** when one verdict's share is at least ``SETTLED_SHARE`` = 0.95, and "not
settled yet" otherwise. With every pair rated all draws agree, and the settled verdict is the compare
page's.

The test of draw ``s``: ``p_s = (1 + #{b : |sum_q σ_bq d_sq| >= |sum_q d_sq|}) / (1 + B)`` with the
same ``B`` random sign vectors ``σ_b`` for every draw (drawn as
:func:`~evaluation.metrics.stats.paired_randomization_test` draws them, so a draw with every question
defined gets exactly that function's p-value for the same seed).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from evaluation.metrics.stats import BLOCK_ELEMENTS

__all__ = [
    "REAL_IMPROVEMENT",
    "SETTLED_SHARE",
    "VERDICTS",
    "VerdictShares",
    "randomization_p_values",
    "verdict_shares",
]

REAL_IMPROVEMENT = "real improvement"
VERDICTS = (REAL_IMPROVEMENT, "within noise", "real drop")
SETTLED_SHARE = 0.95


@dataclass(frozen=True)
class VerdictShares:
    """Share of the draws ending in each verdict (``VERDICTS`` order) and the settled one, or ``""``."""

    shares: tuple[float, float, float]
    settled: str

    def share(self, verdict: str) -> float:
        return self.shares[VERDICTS.index(verdict)]


def randomization_p_values(
    differences: NDArray[np.float64], *, n_permutations: int, rng: np.random.Generator
) -> NDArray[np.float64]:
    """``(S,)`` two-sided p-values of the paired randomization test for each row of ``(S, Q)``
    per-question differences (``NaN``: question left out of that row; a row with none gets ``NaN``)."""
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 2:
        raise ValueError(f"differences must be (draws, questions), got shape {d.shape}")
    if np.isinf(d).any():
        raise ValueError("differences contains an infinite value")
    if n_permutations < 1:
        raise ValueError(f"n_permutations must be at least 1, got {n_permutations}")
    defined = ~np.isnan(d)
    values = np.where(defined, d, 0.0)
    total = values.sum(axis=1)
    tolerance = 1e-9 * np.maximum(1.0, np.abs(values).sum(axis=1))
    at_least = np.zeros(d.shape[0], dtype=np.int64)
    # Blocks of the same size as the stats module's, so the same seed gives the same sign vectors.
    block = max(1, BLOCK_ELEMENTS // max(d.shape[1], 1))
    for start in range(0, n_permutations, block):
        rows = min(block, n_permutations - start)
        # Bit 1 keeps a question's sign, bit 0 flips it: the permuted sum is 2 * sum(kept) - sum(all).
        bits = rng.integers(0, 2, size=(rows, d.shape[1]), dtype=np.int8).astype(np.float64)
        permuted = 2.0 * (bits @ values.T) - total  # (rows, S)
        at_least += (np.abs(permuted) >= np.abs(total) - tolerance).sum(axis=0)
    p = (1 + at_least) / (1 + n_permutations)
    return np.where(defined.any(axis=1), p, np.nan)


def verdict_shares(
    differences: NDArray[np.float64],
    *,
    alpha: float = 0.05,
    n_permutations: int = 10_000,
    seed: int | None = 0,
) -> VerdictShares:
    """The verdict's shares over ``(S, Q)`` per-question differences (challenger − champion) of S draws."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be between 0 and 1, got {alpha!r}")
    d = np.asarray(differences, dtype=np.float64)
    if d.ndim != 2 or d.shape[0] == 0:
        raise ValueError(f"differences must be (draws, questions) with at least one draw, got {d.shape}")
    p = randomization_p_values(d, n_permutations=n_permutations, rng=np.random.default_rng(seed))
    mean = np.where(~np.isnan(d), d, 0.0).sum(axis=1)  # only its sign matters
    significant = p < alpha  # False for NaN
    better = significant & (mean > 0)
    worse = significant & (mean < 0)
    n = d.shape[0]
    shares = (float(better.sum() / n), float((~better & ~worse).sum() / n), float(worse.sum() / n))
    best = int(np.argmax(shares))
    settled = VERDICTS[best] if shares[best] >= SETTLED_SHARE else ""
    return VerdictShares(shares=shares, settled=settled)
