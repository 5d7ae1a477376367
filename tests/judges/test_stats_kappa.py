import math

import pytest

from judges.stats.kappa import weighted_kappa


def test_weighted_kappa_quadratic_hand_computed():
    # O: (0,0), (1,1), (2,3), (3,3), a quarter each; Σ w·O = (1/9)/4 = 1/36.
    # Rows 1/4 each; columns (1/4, 1/4, 0, 1/2); Σ_i (i − j)² = 14, 6, 6, 14 for j = 0..3, so
    # Σ w·E = (1/4)(1/4·14 + 1/4·6 + 0·6 + 1/2·14)/9 = 1/3 and κ = 1 − (1/36)/(1/3) = 11/12.
    assert math.isclose(weighted_kappa([0, 1, 2, 3], [0, 1, 3, 3]), 11 / 12)


def test_weighted_kappa_linear_hand_computed():
    # Σ w·O = (1/3)/4 = 1/12; Σ_i |i − j| = 6, 4, 4, 6, so Σ w·E = (1/4)(1.5 + 1 + 0 + 3)/3 = 11/24;
    # κ = 1 − (1/12)/(11/24) = 9/11.
    assert math.isclose(weighted_kappa([0, 1, 2, 3], [0, 1, 3, 3], weights="linear"), 9 / 11)


def test_weighted_kappa_perfect_agreement_is_one():
    assert weighted_kappa([0, 1, 2, 3, 3], [0, 1, 2, 3, 3]) == 1.0


def test_weighted_kappa_reversed_scale_is_negative():
    assert weighted_kappa([0, 1, 2, 3], [3, 2, 1, 0]) < 0


@pytest.mark.parametrize(
    ("first", "second", "message"),
    [
        ([], [], "at least one item"),
        ([2, 2], [2, 2], "undefined"),
        ([0, 4], [0, 1], "from 0 to 3"),
        ([0, 1], [0], "same items"),
        ([0.5], [1], "whole-number"),
    ],
)
def test_weighted_kappa_bad_input_raises(first, second, message):
    with pytest.raises(ValueError, match=message):
        weighted_kappa(first, second)


def test_weighted_kappa_unknown_weights_raises():
    with pytest.raises(ValueError, match="weights"):
        weighted_kappa([0, 1], [0, 1], weights="cubic")
