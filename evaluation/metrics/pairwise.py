"""Every pair of N runs compared on the same questions, with Holm's correction over the pairs.

``matrix[q, r]`` is run r's value (e.g. NDCG@10) on question q, NaN where undefined. For each pair
``a < b`` (columns; callers order runs oldest first), :func:`evaluation.metrics.stats.compare_runs`
compares B with A on the questions where both are defined (difference = mean B − mean A, bootstrap CI,
paired randomization p), and the m = N(N − 1)/2 p-values are adjusted together by
:func:`evaluation.metrics.holm.holm_adjust`. Per pair it also counts the questions B wins
(``b_q > a_q``), loses and ties. Deterministic given ``seed`` (every pair uses the same seed, as a
two-run comparison would).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from evaluation.metrics.holm import holm_adjust
from evaluation.metrics.stats import PairedComparison, compare_runs

__all__ = ["Pair", "compare_pairs"]


@dataclass(frozen=True)
class Pair:
    a: int
    b: int
    comparison: PairedComparison  # compare_runs(matrix[:, b], matrix[:, a])
    p_holm: float  # NaN when the pair shares no question
    winners: int
    losers: int
    ties: int


def compare_pairs(
    matrix: ArrayLike, *, seed: int | None = 0, n_resamples: int = 10_000, n_permutations: int = 10_000
) -> list[Pair]:
    """All pairs (0, 1), (0, 2), …, (N − 2, N − 1) of the matrix's columns; ValueError for a matrix that
    is not 2-D with at least 2 columns."""
    values = np.asarray(matrix, dtype=np.float64)
    if values.ndim != 2 or values.shape[1] < 2:
        raise ValueError(f"matrix must be questions × runs with 2 or more runs, got shape {values.shape}")
    columns = values.shape[1]
    found = []
    for a in range(columns):
        for b in range(a + 1, columns):
            comparison = compare_runs(
                values[:, b], values[:, a], seed=seed, n_resamples=n_resamples, n_permutations=n_permutations
            )
            found.append((a, b, comparison))
    adjusted = holm_adjust([c.p_value for _, _, c in found])
    pairs = []
    for (a, b, comparison), p_holm in zip(found, adjusted, strict=True):
        both = ~(np.isnan(values[:, a]) | np.isnan(values[:, b]))
        delta = values[both, b] - values[both, a]
        pairs.append(
            Pair(
                a=a,
                b=b,
                comparison=comparison,
                p_holm=float(p_holm),
                winners=int(np.sum(delta > 0)),
                losers=int(np.sum(delta < 0)),
                ties=int(np.sum(delta == 0)),
            )
        )
    return pairs
