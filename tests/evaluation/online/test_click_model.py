"""The position-based click model fitted by EM: a hand example and known parameters recovered."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.online.click_model import fit_position_based_model


def test_fit_position_based_model_one_rank_gives_the_click_rate():
    model = fit_position_based_model([1], [0], [30], [120])

    assert model.examination.tolist() == [1.0]
    assert model.attractiveness.tolist() == pytest.approx([0.25], abs=1e-6)


def test_fit_position_based_model_by_hand_on_a_saturated_example():
    # Pair 0 clicked 50/100 at rank 1 and 25/100 at rank 2; pair 1 10/100 at rank 2. With θ_1 = 1 the
    # products fit exactly: γ_0 = 0.5, θ_2 = 0.25 / 0.5 = 0.5, γ_1 = 0.1 / 0.5 = 0.2.
    model = fit_position_based_model(
        rank=[1, 2, 2],
        pair=[0, 0, 1],
        clicks=[50, 25, 10],
        impressions=[100, 100, 100],
        tolerance=1e-12,
        max_iterations=20_000,
    )

    assert model.ranks.tolist() == [1, 2]
    assert model.examination == pytest.approx([1.0, 0.5], abs=1e-4)
    assert model.attractiveness == pytest.approx([0.5, 0.2], abs=1e-4)
    assert model.impressions.tolist() == [200, 100]


def test_fit_position_based_model_recovers_known_parameters_from_simulated_clicks():
    rng = np.random.default_rng(36)
    ranks, pairs, shown = 6, 40, 60_000
    theta = 1.0 / np.arange(1, ranks + 1) ** 0.7  # examination, 1 at the top
    gamma = rng.uniform(0.05, 0.95, pairs)  # attractiveness
    rank = rng.integers(1, ranks + 1, shown)
    pair = rng.integers(0, pairs, shown)
    clicked = rng.random(shown) < theta[rank - 1] * gamma[pair]

    model = fit_position_based_model(rank, pair, clicked, np.ones(shown))
    naive_ctr = np.bincount(pair, weights=clicked) / np.bincount(pair)

    assert model.converged
    assert np.abs(model.examination - theta).max() < 0.02
    assert np.abs(model.attractiveness - gamma).max() < 0.08
    # The click rate alone is biased by where a pair was shown: off by a third on average.
    assert np.abs(naive_ctr - gamma).mean() > 4 * np.abs(model.attractiveness - gamma).mean()


def test_fit_position_based_model_leaves_pairs_never_shown_undefined():
    model = fit_position_based_model([1, 2], [0, 0], [1, 0], [2, 2], n_pairs=2)

    assert np.isnan(model.attractiveness[1])
    assert model.impressions.tolist() == [4, 0]


@pytest.mark.parametrize(
    ("clicks", "impressions", "message"), [([3], [2], "between"), ([1, 1], [2], "same length")]
)
def test_fit_position_based_model_refuses_bad_counts(clicks, impressions, message):
    with pytest.raises(ValueError, match=message):
        fit_position_based_model([1] * len(clicks), [0] * len(clicks), clicks, impressions)
