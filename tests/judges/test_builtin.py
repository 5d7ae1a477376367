import pytest

from judges.builtin import DEFAULT_THRESHOLDS, calibrate, grade


def test_calibrate_matches_the_share_of_each_grade():
    # Shares of stars ≤ 0, 1, 2: 0.25, 0.5, 0.75 → the "higher" quantiles of the sorted scores.
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    stars = [0, 0, 1, 1, 2, 2, 3, 3]

    thresholds = calibrate(scores, stars)

    assert thresholds == (0.3, 0.5, 0.7)
    assert [grade(s, thresholds) for s in scores] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_calibrate_without_labels_uses_defaults():
    assert calibrate([], []) == DEFAULT_THRESHOLDS


def test_grade_counts_thresholds_reached():
    assert [grade(x, (0.3, 0.55, 0.8)) for x in (0.0, 0.3, 0.6, 1.0)] == [0, 1, 2, 3]


def test_calibrate_bad_input_raises():
    with pytest.raises(ValueError, match="same length"):
        calibrate([0.1], [0, 1])
    with pytest.raises(ValueError, match="from 0 to 3"):
        calibrate([0.1], [4])
