"""The online verdict of an interleaved test: Δ, its always-valid 95% interval, and a sequential test.

**Δ** (Chapelle, Joachims, Radlinski & Yue, TOIS 2012) over the queries that took part
(:mod:`.credit`), from the challenger's side::

    Δ = (wins + ½ ties) / (wins + losses + ties) − ½  =  (wins − losses) / (2 n)      ∈ [−½, ½]

**The test: a mixture SPRT on the decisive queries, with always-valid p-values** (Robbins 1970; Johari,
Koomen, Pekelis & Walsh, "Always valid inference", Operations Research 2022). Δ = 0 exactly when a
decisive query (a win or a loss) is a win with probability p = ½, and ties carry no information about
which team is better. So the test looks at the W wins and L losses only, and mixes the likelihood ratio
of p against ½ over a Beta(a, a) prior on p::

    Λ_n = ∫ p^W (1 − p)^L dBeta(a, a)(p) / (½)^(W+L)  =  2^(W+L) · B(W + a, L + a) / B(a, a)
    p-value_n = min(1, min over the looks so far of 1 / Λ)        significant when p-value ≤ α

Under the null Λ is a non-negative martingale with Λ_0 = 1 (each decisive query multiplies it by a
factor whose mean under p = ½ is 1, whatever the tie rate and however it varies between queries), so by
Ville's inequality P(Λ ever reaches 1/α) ≤ α: the type-I error is at most α however often, and whenever,
the page is looked at, and the test may stop at the first significant look. The bound is exact, not
asymptotic. Why this and not the alternatives:

* not the normal-mixture mSPRT on the per-query scores: it plugs in an estimated variance and a normal
  approximation, so it holds only asymptotically, and the first looks (10 queries) are where peeking
  hurts most; the Beta mixture is the same construction with the exact Bernoulli likelihood;
* not Wald's SPRT: it tests p = ½ against one designed p₁ and needs a second test for the other
  direction; for a true effect far from p₁ its sample size balloons, and it gives no interval.

``a`` sets where the mixture puts its weight: Beta(a, a) has standard deviation 1 / (2 √(2a + 1)) around
½, so ``MIXTURE`` = 100 aims at win shares of 0.5 ± 0.035, the size of an effect worth testing online;
``bench/bench_interleaving_error.py`` measures the power for several ``a``.

**The 95% interval** is the confidence sequence of the same martingale (all p with Λ_n(p) < 1/α, where
Λ_n(p) uses p in place of ½), valid at every look at once: {p : B(W + a, L + a) / B(a, a) <
p^W (1 − p)^L / α}, mapped to Δ = (p − ½) · d̂ with d̂ = (W + L) / n the share of decisive queries. It
excludes 0 exactly when the test is significant; its width treats d̂ as known (a share, estimated far
more precisely than the difference p − ½).

**The verdict**: "challenger better" / "challenger worse" when significant (by the sign of W − L);
"within noise" when the stop rule's budget of served queries is spent, or when the whole interval lies
within ±``negligible``; otherwise "keep going" with about N more queries: the served queries until the
test would be significant with probability ``power`` if the true Δ were θ = max(|Δ̂|, ``negligible``),
counting only the test's state at that point (so N errs high if Δ̂ is right: it ignores crossing
earlier; early on Δ̂ is noisy, and the bench finds 78% of tests significant by then instead of 80%), with
the binomial tail in its normal approximation::

    P( W + Binomial(k, ½ + θ / d̂) ≥ w*(W + L + k) ) ≥ power,   w*(m) = min{x : Λ(x, m − x) ≥ 1/α}
    N = k / (d̂ · c),   c = n / impressions  (the share of served queries that took part)
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .credit import Tally

__all__ = [
    "ALPHA",
    "BETTER",
    "KEEP_GOING",
    "MIXTURE",
    "NEGLIGIBLE",
    "POWER",
    "VERDICTS",
    "WITHIN_NOISE",
    "WORSE",
    "OnlineVerdict",
    "log_gamma",
    "log_mixture_ratio",
    "online_verdict",
    "sequential_p_values",
    "win_share_interval",
]

ALPHA = 0.05
MIXTURE = 100.0
NEGLIGIBLE = 0.005
POWER = 0.8
BETTER = "challenger better"
WORSE = "challenger worse"
WITHIN_NOISE = "within noise"
KEEP_GOING = "keep going"
VERDICTS = (BETTER, WITHIN_NOISE, WORSE, KEEP_GOING)

_SHIFT = 15.0  # the Stirling series below is accurate to ~1e-14 from here on
_HALF_LOG_2PI = 0.5 * math.log(2.0 * math.pi)


@dataclass(frozen=True)
class OnlineVerdict:
    """Δ (NaN before any query took part), its always-valid 95% interval (NaN before any decisive
    query), the always-valid p-value, the verdict and, when it is "keep going", about how many more
    served queries (None when it cannot be estimated yet)."""

    delta: float
    low: float
    high: float
    p_value: float
    verdict: str
    more_queries: int | None


def log_gamma(x: ArrayLike) -> NDArray[np.float64]:
    """log Γ(x) for x > 0, elementwise: Stirling's series from x ≥ 15, after shifting smaller x up with
    log Γ(x) = log Γ(x + k) − Σ_{i<k} log(x + i). Within 1e-13 of ``math.lgamma`` (tests)."""
    x = np.asarray(x, dtype=np.float64)
    shift = np.maximum(np.ceil(_SHIFT - x), 0.0)
    correction = np.zeros_like(x)
    for i in range(int(shift.max(initial=0.0))):
        correction += np.where(i < shift, np.log(x + i), 0.0)
    y = x + shift
    inverse = 1.0 / y
    inverse2 = inverse * inverse
    series = inverse * (1 / 12 - inverse2 * (1 / 360 - inverse2 * (1 / 1260 - inverse2 * (1 / 1680))))
    return (y - 0.5) * np.log(y) - y + _HALF_LOG_2PI + series - correction


def log_mixture_ratio(wins: ArrayLike, losses: ArrayLike, *, mixture: float = MIXTURE) -> NDArray[np.float64]:
    """log Λ = (W + L) log 2 + log B(W + a, L + a) − log B(a, a), elementwise over arrays of counts."""
    w = np.asarray(wins, dtype=np.int64)
    los = np.asarray(losses, dtype=np.int64)
    if mixture <= 0:
        raise ValueError(f"mixture must be positive, got {mixture}")
    if (w < 0).any() or (los < 0).any():
        raise ValueError("wins and losses must be at least 0")
    w, los = np.broadcast_arrays(w, los)
    a = float(mixture)
    log_beta_prior = 2.0 * math.lgamma(a) - math.lgamma(2.0 * a)
    return (
        (w + los) * math.log(2.0)
        + log_gamma(w + a)
        + log_gamma(los + a)
        - log_gamma(w + los + 2.0 * a)
        - log_beta_prior
    )


def sequential_p_values(
    outcomes: ArrayLike, *, mixture: float = MIXTURE, start: tuple[int, int] = (0, 0)
) -> NDArray[np.float64]:
    """Always-valid p-values after each query, along the last axis of ``outcomes`` (+1 win, −1 loss,
    0 tie or no click, in arrival order): ``min(1, min_{m ≤ n} 1 / Λ_m)``. ``start``: the wins and
    losses of the queries before these (a test read in parts: the minimum over the earlier parts is the
    caller's), so Λ_m counts W_start + W_m and L_start + L_m."""
    x = np.asarray(outcomes)
    wins = start[0] + np.cumsum(x == 1, axis=-1)
    losses = start[1] + np.cumsum(x == -1, axis=-1)
    log_ratio = log_mixture_ratio(wins, losses, mixture=mixture)
    return np.minimum.accumulate(np.minimum(1.0, np.exp(-log_ratio)), axis=-1)


def win_share_interval(
    wins: ArrayLike, losses: ArrayLike, *, alpha: float = ALPHA, mixture: float = MIXTURE
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The always-valid (1 − α) interval of p = P(win | decisive): the p where
    log B(W + a, L + a) − log B(a, a) − W log p − L log(1 − p) < log(1/α), by bisection on each side of
    W / (W + L) (the interval is [0, 1] before any decisive query)."""
    w = np.atleast_1d(np.asarray(wins, dtype=np.float64))
    los = np.atleast_1d(np.asarray(losses, dtype=np.float64))
    w, los = np.broadcast_arrays(w, los)
    wi, li = w.astype(np.int64), los.astype(np.int64)
    log_marginal = log_mixture_ratio(wi, li, mixture=mixture) - (w + los) * math.log(2.0)
    limit = math.log(1.0 / alpha)

    def excess(p: NDArray[np.float64]) -> NDArray[np.float64]:
        with np.errstate(divide="ignore", invalid="ignore"):
            log_lik = np.where(w > 0, w * np.log(p), 0.0) + np.where(los > 0, los * np.log1p(-p), 0.0)
        return log_marginal - log_lik - limit

    n = w + los
    centre = np.where(n > 0, w / np.maximum(n, 1), 0.5)
    bounds = []
    for edge in (0.0, 1.0):
        inside, outside = centre.copy(), np.full_like(centre, edge)
        reaches_edge = excess(outside) < 0  # the edge itself is inside (no win, or no loss, yet)
        for _ in range(60):
            middle = 0.5 * (inside + outside)
            out = excess(middle) >= 0
            outside = np.where(out, middle, outside)
            inside = np.where(out, inside, middle)
        bounds.append(np.where(reaches_edge, edge, 0.5 * (inside + outside)))
    return bounds[0], bounds[1]


def _normal_cdf(z: NDArray[np.float64]) -> NDArray[np.float64]:
    return 0.5 * (1.0 + np.vectorize(math.erf, otypes=[np.float64])(z / math.sqrt(2.0)))


def _decisive_queries_needed(
    ahead: int, behind: int, *, share: float, alpha: float, mixture: float, power: float
) -> int | None:
    """More decisive queries until P(significant) ≥ ``power`` when each is won (by the side ahead)
    with probability ``share``; None beyond 10⁹."""
    more = np.unique(np.round(np.logspace(0, 9, 721)).astype(np.int64))
    total = ahead + behind + more
    # w*(m): the fewest wins of the side ahead out of m that make Λ ≥ 1/α (Λ rises with |W − L|).
    low, high = np.ceil(total / 2).astype(np.int64), total.copy()
    reachable = log_mixture_ratio(high, total - high, mixture=mixture) >= math.log(1.0 / alpha)
    for _ in range(40):
        middle = (low + high) // 2
        crossed = log_mixture_ratio(middle, total - middle, mixture=mixture) >= math.log(1.0 / alpha)
        high = np.where(crossed, middle, high)
        low = np.where(crossed, low, middle + 1)
    needed = high - ahead  # wins still needed among the ``more`` queries
    sd = np.sqrt(more * share * (1.0 - share))
    chance = _normal_cdf((more * share - (needed - 0.5)) / np.maximum(sd, 1e-12))
    chance = np.where(reachable & (needed <= more), chance, 0.0)
    enough = np.flatnonzero(chance >= power)
    return int(more[enough[0]]) if enough.size else None


def online_verdict(
    counts: Tally,
    *,
    alpha: float = ALPHA,
    mixture: float = MIXTURE,
    p_floor: float = 1.0,
    max_queries: int | None = None,
    negligible: float = NEGLIGIBLE,
    power: float = POWER,
) -> OnlineVerdict:
    """The verdict of a test from its counts. ``p_floor``: the smallest p-value an earlier look saw
    (the always-valid p-value never rises); ``max_queries``: the stop rule's budget of served queries."""
    w, los, ties = counts.wins, counts.losses, counts.ties
    n = w + los + ties
    if n == 0:
        return OnlineVerdict(math.nan, math.nan, math.nan, min(1.0, p_floor), KEEP_GOING, None)
    delta = (w - los) / (2.0 * n)
    decisive = (w + los) / n
    p_value = min(1.0, p_floor, math.exp(-float(log_mixture_ratio(w, los, mixture=mixture))))
    low = high = math.nan
    if w + los:
        p_low, p_high = win_share_interval(w, los, alpha=alpha, mixture=mixture)
        low, high = (float(p_low[0]) - 0.5) * decisive, (float(p_high[0]) - 0.5) * decisive
    if p_value <= alpha:
        verdict = BETTER if w > los else WORSE if los > w else WITHIN_NOISE
        return OnlineVerdict(delta, low, high, p_value, verdict, None)
    spent = max_queries is not None and counts.impressions >= max_queries
    settled = w + los > 0 and -negligible <= low and high <= negligible
    if spent or settled:
        return OnlineVerdict(delta, low, high, p_value, WITHIN_NOISE, None)
    more = None
    if w + los and counts.impressions:
        effect = max(abs(delta), negligible)
        share = min(0.5 + effect / decisive, 0.999)
        ahead, behind = (w, los) if w >= los else (los, w)
        decisive_more = _decisive_queries_needed(
            ahead, behind, share=share, alpha=alpha, mixture=mixture, power=power
        )
        if decisive_more is not None:
            more = math.ceil(decisive_more / (decisive * n / counts.impressions))
    return OnlineVerdict(delta, low, high, p_value, KEEP_GOING, more)
