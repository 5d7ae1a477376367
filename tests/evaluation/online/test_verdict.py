"""The online verdict: Δ, the mixture SPRT's always-valid p-values and interval, the verdicts, and a small
simulation of its type-I error under peeking (the full one: bench/bench_interleaving_error.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.online import (
    BETTER,
    KEEP_GOING,
    WITHIN_NOISE,
    WORSE,
    Tally,
    log_gamma,
    log_mixture_ratio,
    online_verdict,
    sequential_p_values,
    win_share_interval,
)


def _log_beta(x: float, y: float) -> float:
    return math.lgamma(x) + math.lgamma(y) - math.lgamma(x + y)


def test_log_mixture_ratio_by_hand():
    # a = 1: Λ(2 wins) = 2^2 B(3, 1) / B(1, 1) = 4 / 3.  a = 2: Λ(3, 1) = 2^4 B(5, 3) / B(2, 2) = 16 (1/105) / (1/6) = 32/35.
    assert np.exp(log_mixture_ratio(2, 0, mixture=1.0)) == pytest.approx(4 / 3, rel=1e-12)
    assert np.exp(log_mixture_ratio(3, 1, mixture=2.0)) == pytest.approx(32 / 35, rel=1e-12)
    assert np.exp(log_mixture_ratio([0, 1], [0, 0], mixture=5.0)) == pytest.approx([1.0, 1.0], rel=1e-12)


def test_log_gamma_matches_math_lgamma_from_small_to_large_arguments():
    x = np.array([0.5, 1.0, 2.0, 3.7, 14.9, 15.0, 100.0, 1e4, 1e7])

    expected = [math.lgamma(v) for v in x]

    assert log_gamma(x) == pytest.approx(expected, rel=1e-13, abs=1e-13)


def test_sequential_p_values_never_rise_by_hand():
    # a = 1: 1/Λ after 1, 2, 3 wins = 1, 3/4, 1/2; a tie changes nothing; then a loss: Λ(3, 1) = 16 B(4, 2) = 0.8.
    p = sequential_p_values([1, 0, 1, 1, -1], mixture=1.0)

    assert p == pytest.approx([1.0, 1.0, 0.75, 0.5, 0.5], rel=1e-12)


def test_win_share_interval_edges_solve_the_mixture_inequality():
    low, high = win_share_interval([60, 0], [40, 0], alpha=0.05, mixture=100.0)
    log_marginal = _log_beta(160, 140) - _log_beta(100, 100)

    for p in (low[0], high[0]):
        assert log_marginal - 60 * math.log(p) - 40 * math.log(1 - p) == pytest.approx(math.log(20), abs=1e-9)
    assert low[0] < 0.6 < high[0]
    assert (low[1], high[1]) == (0.0, 1.0)  # nothing decisive yet: any share


def test_online_verdict_better_by_hand():
    counts = Tally(impressions=1000, queries_with_clicks=400, wins=150, losses=90, ties=160)
    p_expected = math.exp(-(240 * math.log(2) + _log_beta(250, 190) - _log_beta(100, 100)))

    result = online_verdict(counts)

    assert result.delta == 0.075  # (150 + 80) / 400 - 1/2
    assert result.p_value == pytest.approx(p_expected, rel=1e-9)
    assert result.p_value == pytest.approx(0.0243, abs=1e-4)
    assert result.verdict == BETTER
    assert 0 < result.low < result.delta < result.high
    assert result.more_queries is None


def test_online_verdict_worse_when_the_challenger_loses():
    result = online_verdict(Tally(impressions=1000, queries_with_clicks=400, wins=90, losses=150, ties=160))

    assert result.delta == -0.075
    assert result.verdict == WORSE
    assert result.low < result.delta < result.high < 0


def test_online_verdict_keeps_going_with_an_estimate_that_falls_as_evidence_grows():
    early = online_verdict(Tally(impressions=500, queries_with_clicks=200, wins=50, losses=45, ties=105))
    later = online_verdict(Tally(impressions=5000, queries_with_clicks=2000, wins=500, losses=450, ties=1050))

    assert early.verdict == later.verdict == KEEP_GOING
    assert early.low < 0 < early.high
    assert early.more_queries is not None and later.more_queries is not None
    assert later.more_queries < early.more_queries


def test_online_verdict_is_within_noise_when_the_budget_is_spent_or_the_interval_is_negligible():
    small = Tally(impressions=1000, queries_with_clicks=400, wins=100, losses=100, ties=200)
    huge_tie = Tally(impressions=400_000, queries_with_clicks=400_000, wins=200_000, losses=200_000, ties=0)

    assert online_verdict(small, max_queries=1000).verdict == WITHIN_NOISE
    assert online_verdict(small, max_queries=1001).verdict == KEEP_GOING
    result = online_verdict(huge_tie)
    assert result.verdict == WITHIN_NOISE
    assert -0.005 <= result.low < 0 < result.high <= 0.005


def test_online_verdict_before_any_click_and_with_a_floor_from_an_earlier_look():
    nothing = online_verdict(Tally(impressions=30, queries_with_clicks=0, wins=0, losses=0, ties=0))
    floored = online_verdict(
        Tally(impressions=40, queries_with_clicks=20, wins=10, losses=10, ties=0), p_floor=0.01
    )

    assert math.isnan(nothing.delta) and nothing.verdict == KEEP_GOING and nothing.more_queries is None
    assert floored.p_value == 0.01 and floored.verdict == WITHIN_NOISE  # significant once, but level now


def test_sequential_test_keeps_type_i_error_under_peeking_where_a_z_test_does_not():
    """300 A/A tests of 1,000 queries (P(win) = P(loss) = 0.2), looked at after every 10."""
    rng = np.random.default_rng(2026)
    u = rng.random((300, 1000))
    outcomes = np.where(u < 0.2, 1, np.where(u < 0.4, -1, 0))
    looks = np.arange(10, 1001, 10) - 1

    sequential = (sequential_p_values(outcomes)[:, looks] <= 0.05).any(axis=1).sum()
    keener = (sequential_p_values(outcomes, mixture=10.0)[:, looks] <= 0.05).any(axis=1).sum()
    n = looks + 1
    total = np.cumsum(outcomes, axis=1)[:, looks]
    squares = np.cumsum(outcomes**2, axis=1)[:, looks]
    variance = (squares / n - (total / n) ** 2) * n / (n - 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.nan_to_num(total / n / np.sqrt(variance / n))
    peeked_z = (np.abs(z) > 1.96).any(axis=1).sum()

    assert sequential == 0  # the app's mixture (a = 100) aims at later, smaller effects
    assert keener == 10  # 3.3% ≤ 5% with a mixture that spends more of α on the first looks
    assert peeked_z == 133  # 44%: the same streams, judged at every look by a fixed-sample test


def test_sequential_test_detects_a_true_effect():
    """100 tests with Δ = 0.05 (P(win) = 0.25, P(loss) = 0.15): significant, in its direction, by 1,000."""
    rng = np.random.default_rng(36)
    u = rng.random((100, 1000))
    outcomes = np.where(u < 0.25, 1, np.where(u < 0.40, -1, 0))

    significant = sequential_p_values(outcomes)[:, -1] <= 0.05

    assert significant.sum() == 95
    assert (outcomes[significant].sum(axis=1) > 0).all()
