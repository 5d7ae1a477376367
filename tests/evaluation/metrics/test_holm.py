"""Holm's adjusted p-values against values worked out by hand."""

import math

import numpy as np
import pytest

from evaluation.metrics.holm import holm_adjust


def test_holm_adjust_hand_computed():
    # Sorted: 0.005 (×4 = 0.020), 0.010 (×3 = 0.030), 0.030 (×2 = 0.060), 0.040 (×1 = 0.040 → max 0.060).
    adjusted = holm_adjust([0.01, 0.04, 0.03, 0.005])

    assert adjusted.tolist() == pytest.approx([0.03, 0.06, 0.06, 0.02], abs=1e-12)


def test_holm_adjust_caps_at_one_and_keeps_order():
    # Sorted: 0.2 (×3 = 0.6), 0.5 (×2 = 1.0), 0.9 (×1 = 0.9 → max 1.0).
    assert holm_adjust([0.9, 0.2, 0.5]).tolist() == pytest.approx([1.0, 0.6, 1.0])


def test_holm_adjust_single_test_is_unchanged():
    assert holm_adjust([0.0123]).tolist() == [0.0123]


def test_holm_adjust_nan_left_out_of_m():
    adjusted = holm_adjust([0.01, math.nan, 0.04])

    # m = 2: 0.01 × 2 = 0.02, 0.04 × 1 = 0.04.
    assert adjusted[0] == pytest.approx(0.02) and adjusted[2] == pytest.approx(0.04)
    assert math.isnan(adjusted[1])


def test_holm_adjust_empty_is_empty():
    assert holm_adjust([]).size == 0


@pytest.mark.parametrize("bad", [[1.5], [-0.1], [[0.1, 0.2]], ["x"]])
def test_holm_adjust_bad_input_is_value_error(bad):
    with pytest.raises(ValueError):
        holm_adjust(np.array(bad, dtype=object) if bad == ["x"] else bad)
