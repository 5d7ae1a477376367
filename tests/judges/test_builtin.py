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


def test_neighbour_mean_weights_the_stars_of_neighbours_that_rated_the_answer():
    from judges.builtin import neighbour_mean

    # Weights 0.81, 0.25, 0.04, 0; the first and third rated the answer (3 and 1 stars), the second did
    # not, the fourth (weight 0: not a neighbour) gave 3 stars: (0.81·3 + 0.04·1) / (0.81 + 0.04).
    weights = [0.81, 0.25, 0.04, 0.0]

    assert neighbour_mean(weights, [3, 0, 1, 3], [1, 0, 1, 1], overall=1.5) == pytest.approx(2.47 / 0.85)


def test_neighbour_mean_without_a_rated_neighbour_is_the_overall_mean():
    from judges.builtin import neighbour_mean

    assert neighbour_mean([0.5, 0.2], [0, 0], [0, 0], overall=1.25) == 1.25
