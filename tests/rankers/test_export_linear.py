"""The linear export model: coordinate ascent over raw feature values with weights >= 0, rated candidates
only, scaled so the engine's own score weighs 1."""

from __future__ import annotations

import numpy as np
import pytest

from rankers.export.linear import fit_export_linear, linear_scores
from rankers.fusion import fit_linear_weights, ideal_dcg_from_labels

# Three questions of four candidates. Column 0 (the engine's score) is a poor order, column 1 the
# stars scaled by 10, column 2 the stars reversed (a weight on it would have to be negative).
STARS = np.array([[0, 1, 2, 3], [3, 0, 1, 2], [1, 3, 0, 2]], dtype=np.float64)
ORIGINAL = np.array([[4, 3, 2, 1], [2, 4, 3, 1], [3, 1, 4, 2]], dtype=np.float64)
VALUES = np.column_stack([ORIGINAL.ravel(), 10 * STARS.ravel(), 3 - STARS.ravel()])
GROUPS = [4, 4, 4]
IDEAL = ideal_dcg_from_labels(STARS, 10)


def test_fit_export_linear_puts_the_weight_on_the_good_feature():
    weights, details = fit_export_linear(VALUES, STARS.ravel(), GROUPS, ideal_dcg=IDEAL, k=10)

    assert weights[2] == 0.0
    assert weights[1] > 0
    assert details["train_ndcg"] == pytest.approx(1.0)
    order = [np.argsort(-linear_scores(VALUES[i * 4 : i * 4 + 4], weights), kind="stable") for i in range(3)]
    assert [STARS[i][o].tolist() for i, o in enumerate(order)] == [[3, 2, 1, 0]] * 3


def test_fit_export_linear_scales_weights_so_original_weighs_one():
    # With the engine's score as good as the stars, the first start (original alone) is kept.
    values = np.column_stack([STARS.ravel(), 3 - STARS.ravel()])

    weights, details = fit_export_linear(values, STARS.ravel(), GROUPS, ideal_dcg=IDEAL, k=10)

    assert weights == [1.0, 0.0]
    assert details["nonnegative"] is True
    assert details["scales"] == [3.0, 3.0]


def test_fit_export_linear_stores_float32_weights():
    weights, _ = fit_export_linear(VALUES, STARS.ravel(), GROUPS, ideal_dcg=IDEAL, k=10)

    assert all(float(np.float32(w)) == w for w in weights)


def test_fit_linear_weights_nonnegative_never_goes_below_zero():
    # Only a negative weight on column 0 would rank these right; nonnegative gives it none.
    values = np.column_stack([3 - STARS.ravel(), np.ones(12)])

    free, _ = fit_linear_weights(values, STARS.ravel(), GROUPS, ideal_dcg=IDEAL, k=10)
    kept, _ = fit_linear_weights(values, STARS.ravel(), GROUPS, ideal_dcg=IDEAL, k=10, nonnegative=True)

    assert free[0] < 0
    assert np.all(kept >= 0) and kept[0] == 0.0


def test_fit_linear_weights_leaves_unrated_candidates_out():
    # The unrated candidate (NaN) has the highest value of column 1: were it 0 stars, column 1 would lose.
    stars = np.array([1.0, 3.0, 0.0, np.nan])
    values = np.array([[3.0, 1.0], [1.0, 3.0], [0.0, 0.0], [0.0, 9.0]])
    ideal = ideal_dcg_from_labels([[3, 1, 0]], 10)

    w, details = fit_linear_weights(values, stars, [4], ideal_dcg=ideal, k=10, nonnegative=True, start=[1, 0])
    zero, _ = fit_linear_weights(
        values, np.nan_to_num(stars), [4], ideal_dcg=ideal, k=10, nonnegative=True, start=[1, 0]
    )

    scores = values[:3] @ w
    assert stars[np.argsort(-scores)].tolist() == [3.0, 1.0, 0.0]
    assert details["questions"] == 1 and details["train_ndcg"] == pytest.approx(1.0)
    assert values[3] @ w > scores.max()  # the unrated answer comes first: nothing said it should not
    assert values[3] @ zero < (values[:3] @ zero).max()  # read as 0 stars, it would have been pushed down
