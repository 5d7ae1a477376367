"""Bootstrap confidence intervals, the paired randomization test and the verdict."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.metrics import (
    PairedComparison,
    bootstrap_ci,
    compare_runs,
    paired_randomization_test,
    verdict,
)


@pytest.fixture
def values() -> np.ndarray:
    return np.random.default_rng(7).random(200)


def test_bootstrap_ci_contains_the_mean(values):
    ci = bootstrap_ci(values, seed=1)
    assert ci.low < ci.mean < ci.high
    assert ci.mean == pytest.approx(values.mean())
    assert ci.n == 200 and ci.confidence == 0.95


def test_bootstrap_ci_width_shrinks_with_more_questions():
    rng = np.random.default_rng(3)
    small = bootstrap_ci(rng.random(50), seed=0)
    large = bootstrap_ci(rng.random(5000), seed=0)
    assert large.high - large.low < small.high - small.low


def test_bootstrap_ci_same_seed_same_interval(values):
    assert bootstrap_ci(values, seed=42) == bootstrap_ci(values, seed=42)
    assert bootstrap_ci(values, seed=42) != bootstrap_ci(values, seed=43)


def test_bootstrap_ci_drops_undefined_questions():
    ci = bootstrap_ci([1.0, math.nan, 0.0, 1.0], seed=0)
    assert ci.n == 3 and ci.mean == pytest.approx(2 / 3)


def test_bootstrap_ci_constant_values_is_a_point():
    ci = bootstrap_ci([0.5] * 10)
    assert ci.low == ci.mean == ci.high == 0.5


def test_bootstrap_ci_no_values_is_nan():
    ci = bootstrap_ci([math.nan])
    assert ci.n == 0 and math.isnan(ci.mean) and math.isnan(ci.low)


def test_compare_runs_identical_runs_p_is_one_and_difference_zero(values):
    result = compare_runs(values, values, seed=0)
    assert result.p_value == 1.0
    assert result.difference == 0.0 and result.ci_low == 0.0 and result.ci_high == 0.0
    assert result.verdict() == "within noise"


def test_compare_runs_clearly_better_run_small_p(values):
    better = np.clip(values + 0.1, 0, 1)
    result = compare_runs(better, values, seed=0)
    assert result.p_value < 0.001
    assert result.p_value >= 1 / 10_001  # never zero
    assert result.ci_low > 0 and result.difference > 0
    assert result.verdict() == "real improvement"
    assert compare_runs(values, better, seed=0).verdict() == "real drop"


def test_compare_runs_noise_is_within_noise():
    rng = np.random.default_rng(11)
    a = rng.random(100)
    b = a + rng.normal(0, 0.01, 100)  # tiny symmetric noise
    result = compare_runs(a, b, seed=0)
    assert result.p_value > 0.05
    assert result.ci_low < 0 < result.ci_high
    assert verdict(result) == "within noise"


def test_compare_runs_same_seed_is_reproducible(values):
    shifted = values[::-1]
    assert compare_runs(values, shifted, seed=5) == compare_runs(values, shifted, seed=5)
    assert paired_randomization_test(values, shifted, seed=5) == paired_randomization_test(
        values, shifted, seed=5
    )


def test_compare_runs_drops_pairs_with_nan():
    result = compare_runs([1.0, math.nan, 0.5, 0.0], [0.0, 0.3, math.nan, 0.0], seed=0)
    assert (result.n, result.n_dropped) == (2, 2)
    assert result.mean_a == pytest.approx(0.5) and result.mean_b == 0.0
    assert result.difference == pytest.approx(0.5)


def test_compare_runs_all_pairs_dropped_is_nan_and_within_noise():
    result = compare_runs([math.nan], [1.0])
    assert result.n == 0 and math.isnan(result.p_value)
    assert result.verdict() == "within noise"


def test_paired_randomization_test_matches_exact_enumeration():
    # 6 questions: the sign-flip distribution has 64 equally likely outcomes; compare with it
    diff = np.array([0.3, 0.1, 0.2, -0.05, 0.15, 0.25])
    signs = np.array(np.meshgrid(*[[-1, 1]] * 6)).reshape(6, -1).T
    exact = (np.abs(signs @ diff) >= abs(diff.sum()) - 1e-12).mean()
    p = paired_randomization_test(diff, np.zeros(6), n_permutations=200_000, seed=0)
    assert p == pytest.approx(exact, abs=0.005)


def test_compare_runs_result_is_frozen(values):
    result = compare_runs(values, values)
    assert isinstance(result, PairedComparison)
    with pytest.raises(AttributeError):
        result.p_value = 0.0  # type: ignore[misc]


def test_compare_runs_mismatched_lengths_raises():
    with pytest.raises(ValueError, match="paired"):
        compare_runs([1.0, 2.0], [1.0])


@pytest.mark.parametrize("kwargs", [{"n_permutations": 0}, {"n_resamples": -1}, {"confidence": 1.5}])
def test_compare_runs_bad_parameters_raise(kwargs):
    with pytest.raises(ValueError):
        compare_runs([1.0], [0.0], **kwargs)


def test_verdict_bad_alpha_raises(values):
    with pytest.raises(ValueError, match="alpha"):
        verdict(compare_runs(values, values), alpha=0)
