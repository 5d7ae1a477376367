"""COEC and attractiveness as 0–3 stars at the documented thresholds."""

from __future__ import annotations

import math

import pytest

from evaluation.online.stars import ATTRACTIVENESS_THRESHOLDS, COEC_THRESHOLDS, NO_STARS, to_stars


def test_to_stars_coec_at_and_around_each_threshold():
    values = [0.0, 0.49, 0.5, 0.99, 1.0, 1.99, 2.0, 7.5, math.nan]

    assert to_stars(values, COEC_THRESHOLDS).tolist() == [0, 0, 1, 1, 2, 2, 3, 3, NO_STARS]


def test_to_stars_attractiveness_in_quarters():
    values = [0.0, 0.24, 0.25, 0.5, 0.74, 0.75, 1.0]

    assert to_stars(values, ATTRACTIVENESS_THRESHOLDS).tolist() == [0, 0, 1, 2, 2, 3, 3]


def test_to_stars_refuses_thresholds_out_of_order():
    with pytest.raises(ValueError, match="increasing"):
        to_stars([1.0], (1.0, 0.5, 2.0))
