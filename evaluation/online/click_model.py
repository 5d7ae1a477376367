"""The position-based click model (PBM), fitted by expectation-maximisation: clicks corrected for the
position they were shown at.

Model (Craswell, Zoeter, Taylor & Ramsey, WSDM 2008; Chuklin, Markov & de Rijke, "Click Models for Web
Search", 2015, §4.2 and §4.3): a hit of pair j = (query, document) shown at rank r is clicked when the user
examines rank r and finds the hit attractive, independently::

    P(C = 1 | r, j) = θ_r · γ_j        θ_r: examination of rank r,  γ_j: attractiveness of pair j

EM over rows (r, j) with n impressions and k clicks (rows of the same (r, j) may repeat):

    E-step, for the n − k impressions not clicked:
        P(E = 1 | C = 0) = θ_r (1 − γ_j) / (1 − θ_r γ_j)        P(A = 1 | C = 0) = (1 − θ_r) γ_j / (1 − θ_r γ_j)
    M-step:
        θ_r = Σ_j [k + (n − k) P(E = 1 | C = 0)] / Σ_j n        γ_j = Σ_r [k + (n − k) P(A = 1 | C = 0)] / Σ_r n

from θ = γ = ½ until no parameter moves by more than ``tolerance`` (or ``max_iterations``). The likelihood
only knows the products θ_r γ_j, so the scale is fixed afterwards by the usual convention that the top rank
is always examined: θ ← θ / θ_top, γ ← γ · θ_top (the lowest rank seen is the top). γ_j is then the chance
that a user who sees the hit clicks it; pairs shown at one rank only are separated from that rank's θ by
the pairs shown at several (a reranker, an interleaved test, or changing rankings provide them).

Vectorised: each iteration is two ``np.bincount`` over the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["PositionBasedModel", "fit_position_based_model", "pair_count"]


@dataclass(frozen=True)
class PositionBasedModel:
    """``examination[i]`` is θ of rank ``ranks[i]`` (1 at the top rank); ``attractiveness[j]`` γ of pair j
    (NaN for a pair index with no impression), with its impressions; ``iterations`` run."""

    ranks: NDArray[np.int64]
    examination: NDArray[np.float64]
    attractiveness: NDArray[np.float64]
    impressions: NDArray[np.int64]
    iterations: int
    converged: bool


def pair_count(pair: NDArray[np.int64], n_pairs: int | None) -> int:
    """The number of pairs a click model's rows index (``n_pairs``, or one more than the largest index),
    checked: indices at least 0 and below it. Both click models read their rows' pairs so."""
    if pair.size and pair.min() < 0:
        raise ValueError("pair indices must be at least 0")
    pairs = int(pair.max()) + 1 if pair.size else 0
    n_pairs = pairs if n_pairs is None else n_pairs
    if n_pairs < pairs:
        raise ValueError(f"n_pairs is {n_pairs} but a pair index is {pairs - 1}")
    return n_pairs


def fit_position_based_model(
    rank: ArrayLike,
    pair: ArrayLike,
    clicks: ArrayLike,
    impressions: ArrayLike,
    *,
    n_pairs: int | None = None,
    tolerance: float = 1e-6,
    max_iterations: int = 500,
) -> PositionBasedModel:
    """Fit the PBM to rows of (rank, pair index 0 … n_pairs − 1, clicks, impressions)."""
    r = np.asarray(rank, dtype=np.int64).ravel()
    j = np.asarray(pair, dtype=np.int64).ravel()
    k = np.asarray(clicks, dtype=np.float64).ravel()
    n = np.asarray(impressions, dtype=np.float64).ravel()
    if not r.size == j.size == k.size == n.size:
        raise ValueError("rank, pair, clicks and impressions must have the same length")
    if (k < 0).any() or (k > n).any():
        raise ValueError("clicks must lie between 0 and the impressions of their row")
    n_pairs = pair_count(j, n_pairs)
    ranks, slot = np.unique(r, return_inverse=True)
    shown_at_rank = np.bincount(slot, weights=n, minlength=ranks.size)
    shown = np.bincount(j, weights=n, minlength=n_pairs)
    theta = np.full(ranks.size, 0.5)
    gamma = np.full(n_pairs, 0.5)
    not_clicked = n - k
    iterations, converged = 0, False
    while iterations < max_iterations and not converged:
        t, g = theta[slot], gamma[j]
        denominator = np.maximum(1.0 - t * g, 1e-300)
        examined = k + not_clicked * t * (1.0 - g) / denominator
        attracted = k + not_clicked * (1.0 - t) * g / denominator
        new_theta = np.divide(
            np.bincount(slot, weights=examined, minlength=ranks.size),
            shown_at_rank,
            out=theta.copy(),
            where=shown_at_rank > 0,
        )
        new_gamma = np.divide(
            np.bincount(j, weights=attracted, minlength=n_pairs), shown, out=gamma.copy(), where=shown > 0
        )
        change = max(np.abs(new_theta - theta).max(initial=0.0), np.abs(new_gamma - gamma).max(initial=0.0))
        theta, gamma = new_theta, new_gamma
        iterations += 1
        converged = change <= tolerance
    top = theta[0] if theta.size and theta[0] > 0 else 1.0
    return PositionBasedModel(
        ranks=ranks,
        examination=theta / top,
        attractiveness=np.where(shown > 0, gamma * top, np.nan),
        impressions=shown.astype(np.int64),
        iterations=iterations,
        converged=converged,
    )
