"""The DBN click model (γ = 1): its closed-form SDBN start, one EM step and the fixed point by hand, and known
parameters of cascade users recovered."""

from __future__ import annotations

import numpy as np
import pytest

from evaluation.online.dbn import fit_dbn

# Pairs A = 0, B = 1, C = 2; five sessions of three hits (rank order), * clicked:
#   s1: A* B  C      s2: A  B* C      s3: A  B  C      s4: B* A* C      s5: C* A  B
SESSION = [1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 5, 5, 5]
RANK = [1, 2, 3] * 5
PAIR = [0, 1, 2, 0, 1, 2, 0, 1, 2, 1, 0, 2, 2, 0, 1]
CLICKED = [1, 0, 0, 0, 1, 0, 0, 0, 0, 1, 1, 0, 1, 0, 0]


def test_fit_dbn_sdbn_by_hand():
    # Read = at or above the last click, or every hit of s3. A: read in s1 s2 s3 s4, clicked in s1 s4 → 2/4;
    # B: read in s2 s3 s4, clicked in s2 s4 → 2/3; C: read in s3 s5, clicked in s5 → 1/2. Last clicks /
    # clicks: A 2/2, B 1/2 (s4's click on B is followed by one on A), C 1/1.
    model = fit_dbn(SESSION, RANK, PAIR, CLICKED, max_iterations=0)

    assert model.sdbn_attractiveness.tolist() == pytest.approx([1 / 2, 2 / 3, 1 / 2])
    assert model.sdbn_satisfaction.tolist() == pytest.approx([1.0, 1 / 2, 1.0])
    assert (model.impressions.tolist(), model.reads.tolist(), model.clicks.tolist()) == (
        [5, 5, 5],
        [4, 3, 2],
        [2, 2, 1],
    )
    assert model.sessions == 5
    assert model.attractiveness.tolist() == pytest.approx([3 / 6, 3 / 5, 2 / 4])  # no iteration: the start


def test_fit_dbn_one_em_step_by_hand():
    # EM starts from the SDBN smoothed by one pseudo-click and one pseudo-skip: a = (3/6, 3/5, 2/4),
    # s = (3/4, 2/4, 2/3). The after-last-click rows, with q = (1 − s_l) Π (1 − a_r) / (s_l + (1 − s_l) Π):
    #   s1 (last A): Π = (2/5)(1/2) = 1/5, q = (1/20) / (3/4 + 1/20) = 1/16; P(A_B) = (15/16)(3/5) = 9/16,
    #                P(A_C) = (15/16)(1/2) = 15/32; P(S_A) = 15/16
    #   s2 (last B): Π = 1/2, q = (1/4) / (1/2 + 1/4) = 1/3; P(A_C) = (2/3)(1/2) = 1/3; P(S_B) = 2/3
    #   s4 (last A): Π = 1/2, q = (1/8) / (3/4 + 1/8) = 1/7; P(A_C) = (6/7)(1/2) = 3/7; P(S_A) = 6/7
    #   s5 (last C): Π = (1/2)(2/5) = 1/5, q = (1/15) / (2/3 + 1/15) = 1/11; P(A_A) = (10/11)(1/2) = 5/11,
    #                P(A_B) = (10/11)(3/5) = 6/11; P(S_C) = 10/11
    # a_A = (1 + 0 + 0 + 1 + 5/11) / 5, a_B = (9/16 + 1 + 0 + 1 + 6/11) / 5, a_C = (15/32 + 1/3 + 0 + 3/7 + 1) / 5;
    # s_A = (15/16 + 6/7) / 2, s_B = (2/3 + 0) / 2, s_C = 10/11.
    model = fit_dbn(SESSION, RANK, PAIR, CLICKED, max_iterations=1)

    assert model.attractiveness.tolist() == pytest.approx(
        [(2 + 5 / 11) / 5, (2 + 9 / 16 + 6 / 11) / 5, (15 / 32 + 1 / 3 + 3 / 7 + 1) / 5]
    )
    assert model.satisfaction.tolist() == pytest.approx([(15 / 16 + 6 / 7) / 2, 1 / 3, 10 / 11])
    assert (model.iterations, model.converged) == (1, False)


def test_fit_dbn_converges_to_the_maximum_likelihood_by_hand():
    # s4 proves a click on B can leave the user unsatisfied, and s2 cannot tell satisfaction from reading on:
    # the likelihood is highest at s_B = 0, so C was read and not clicked in s2: a_C = 1 click / 3 reads.
    model = fit_dbn(SESSION, RANK, PAIR, CLICKED, tolerance=1e-10, max_iterations=5000)

    assert model.converged
    assert model.attractiveness.tolist() == pytest.approx([1 / 2, 2 / 3, 1 / 3], abs=1e-6)
    assert model.satisfaction.tolist() == pytest.approx([1.0, 0.0, 1.0], abs=1e-6)


def test_fit_dbn_pairs_unread_or_unclicked_have_no_figure():
    # Session 7 shows pair 0 then 2, clicks 0; pair 2 sits below the last click (never surely read), pair 1
    # and 3 are never shown.
    model = fit_dbn([7, 7], [1, 2], [0, 2], [True, False], n_pairs=4)

    assert (model.impressions.tolist(), model.reads.tolist()) == ([1, 0, 1, 0], [1, 0, 0, 0])
    assert model.attractiveness[0] == 1.0
    assert np.isnan(model.attractiveness[1:]).all() and np.isnan(model.sdbn_attractiveness[1:]).all()
    assert model.satisfaction[0] == pytest.approx(1.0, abs=1e-5) and np.isnan(model.satisfaction[1:]).all()


def test_fit_dbn_refuses_rows_that_do_not_line_up():
    with pytest.raises(ValueError, match="same length"):
        fit_dbn([1, 1], [1, 2], [0], [True, False])
    with pytest.raises(ValueError, match="n_pairs"):
        fit_dbn([1], [1], [3], [True], n_pairs=2)


def test_fit_dbn_recovers_the_parameters_of_cascade_users():
    # Navigational users (bench_online's parameters) on random orders of 8 hits out of 12.
    rng = np.random.default_rng(36)
    hits, shown, sessions = 12, 8, 6000
    grade = np.arange(hits) % 3
    p_click, p_stop = np.array([0.05, 0.5, 0.95])[grade], np.array([0.2, 0.5, 0.9])[grade]
    order = np.argsort(rng.random((sessions, hits)), axis=1)[:, :shown]
    clicked = rng.random(order.shape) < p_click[order]
    stops = clicked & (rng.random(order.shape) < p_stop[order])
    read = np.ones_like(clicked)
    read[:, 1:] = np.cumsum(stops, axis=1)[:, :-1] == 0
    clicks = clicked & read

    model = fit_dbn(
        np.repeat(np.arange(sessions), shown),
        np.tile(np.arange(1, shown + 1), sessions),
        order.ravel(),
        clicks.ravel(),
    )

    assert model.converged
    assert np.abs(model.attractiveness - p_click).max() < 0.04
    assert np.abs(model.satisfaction[grade > 0] - p_stop[grade > 0]).max() < 0.08
