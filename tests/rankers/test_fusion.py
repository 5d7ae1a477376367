"""rankers.fusion: z-scores, the untrained fusion, NDCG@k and the linear fusion learner, on hand-computed cases."""

import math

import numpy as np
import pytest

from rankers.fusion import (
    LinearFusion,
    check_groups,
    fit_linear_fusion,
    ideal_dcg_from_labels,
    mean_ndcg,
    rank_within_groups,
    scored_ndcg_at_k,
    untrained_fusion,
    zscore_by_group,
)

L3 = math.log2(3)


def test_zscore_per_group_population_std():
    z = zscore_by_group([1.0, 2.0, 3.0, 5.0, 5.0], [3, 2])
    s = math.sqrt(1.5)  # (x - 2) / sqrt(2/3)
    assert z.tolist() == pytest.approx([-s, 0.0, s, 0.0, 0.0])


def test_zscore_columns_independent_and_shape_kept():
    x = np.array([[0.0, 10.0], [2.0, 10.0], [4.0, 40.0], [6.0, 40.0]])
    z = zscore_by_group(x, [2, 2])
    assert z.shape == (4, 2)
    assert z[:, 0].tolist() == pytest.approx([-1, 1, -1, 1])
    assert z[:, 1].tolist() == pytest.approx([0, 0, 0, 0])  # constant within each question


def test_zscore_empty_groups_and_empty_input():
    assert zscore_by_group([3.0, 1.0], [0, 2, 0]).tolist() == pytest.approx([1.0, -1.0])
    assert zscore_by_group(np.zeros(0), []).shape == (0,)


def test_untrained_fusion_is_sum_of_zscores():
    fused = untrained_fusion([0.0, 10.0, 7.0, 7.0], [0.1, 0.3, 0.9, 0.1], [2, 2])
    assert fused.tolist() == pytest.approx([-2.0, 2.0, 1.0, -1.0])


def test_untrained_fusion_opposite_signals_cancel():
    assert untrained_fusion([1, 2, 3], [3, 2, 1], [3]).tolist() == pytest.approx([0, 0, 0])


@pytest.mark.parametrize(
    "values, groups",
    [
        ([1.0, 2.0], [3]),  # sizes do not add up
        ([1.0, 2.0], [-1, 3]),
        ([1.0, 2.0], [1.5, 0.5]),
        ([1.0, float("nan")], [2]),
        ([1.0, float("inf")], [2]),
        (np.zeros((2, 2, 2)), [2]),
        ([1.0, 2.0], [[2]]),
    ],
)
def test_zscore_bad_input(values, groups):
    with pytest.raises(ValueError):
        zscore_by_group(values, groups)


def test_untrained_fusion_shapes_must_match():
    with pytest.raises(ValueError):
        untrained_fusion([1.0, 2.0], [1.0], [2])


def test_check_groups_accepts_whole_floats():
    assert check_groups([2.0, 1.0], 3).tolist() == [2, 1]


def test_ndcg_hand_computed():
    # Ranked by score: gains 0, 3, 1.  DCG = 3/log2(3) + 1/2.
    dcg = 3 / L3 + 1 / 2
    own_ideal = 3 + 1 / L3  # from the candidates' gains 3, 1
    assert scored_ndcg_at_k([3.0, 2.0, 1.0], [0, 3, 1], [3]).tolist() == pytest.approx([dcg / own_ideal])
    # A relevant answer (2 stars) that retrieval missed still counts in the ideal.
    ideal = ideal_dcg_from_labels([[3, 1, 2, 0]], k=10)
    assert ideal.tolist() == pytest.approx([3 + 2 / L3 + 1 / 2])
    assert scored_ndcg_at_k([3.0, 2.0, 1.0], [0, 3, 1], [3], ideal_dcg=ideal).tolist() == pytest.approx(
        [dcg / (3 + 2 / L3 + 1 / 2)]
    )


def test_ndcg_cutoff_ties_and_undefined():
    # k = 1: only the top one counts; equal scores keep input order (the 0-star answer first).
    assert scored_ndcg_at_k([1.0, 1.0], [0, 2], [2], k=1).tolist() == [0.0]
    values = scored_ndcg_at_k([1.0, 2.0, 5.0], [0, 0, 1], [2, 1])
    assert math.isnan(values[0]) and values[1] == 1.0
    assert mean_ndcg(values) == 1.0
    assert math.isnan(mean_ndcg([float("nan")]))


def test_ndcg_matches_the_metrics_engine():
    from evaluation.metrics.ranking import evaluate_rankings

    rng = np.random.default_rng(3)
    sizes = [7, 12, 3, 15]
    scores = rng.normal(size=sum(sizes)).round(1)  # rounded: ties included
    gains = rng.integers(0, 4, size=sum(sizes)).astype(float)
    offsets = np.cumsum([0, *sizes])
    rankings, labels = [], []
    for g in range(len(sizes)):
        ids = [f"a{i}" for i in range(offsets[g], offsets[g + 1])]
        order = np.argsort(-scores[offsets[g] : offsets[g + 1]], kind="stable")
        rankings.append([ids[i] for i in order])
        labels.append({a: gains[offsets[g] + i] for i, a in enumerate(ids)} | {f"missed{g}": 3})
    ideal = ideal_dcg_from_labels([list(d.values()) for d in labels], 10)
    ours = scored_ndcg_at_k(scores, gains, sizes, k=10, ideal_dcg=ideal)
    theirs = evaluate_rankings(rankings, labels, k=10).ndcg
    assert ours == pytest.approx(theirs)


def test_training_ndcg_is_the_mean_ndcg_at_k_of_the_learned_scores():
    # The learner's objective sums NDCG@k its own way (many weight vectors at once); it is scored_ndcg_at_k's.
    rng = np.random.default_rng(5)
    sizes = np.full(30, 12)
    gains = rng.integers(0, 4, sizes.sum()).astype(float)
    features = rng.normal(size=(sizes.sum(), 3)) + gains[:, None] * np.array([0.4, 0.1, 0.0])
    model = fit_linear_fusion(features, gains, sizes)
    scores = model.score(features, sizes)
    assert model.details["train_ndcg"] == pytest.approx(mean_ndcg(scored_ndcg_at_k(scores, gains, sizes)))


def test_rank_within_groups():
    ranked = rank_within_groups([1.0, 3.0, 2.0, 5.0, 5.0], [3, 2])
    assert [r.tolist() for r in ranked] == [[1, 2, 0], [3, 4]]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"k": 0},
        {"k": 1.5},
        {"ideal_dcg": [1.0, 2.0]},
        {"ideal_dcg": [-1.0]},
    ],
)
def test_ndcg_bad_input(kwargs):
    with pytest.raises(ValueError):
        scored_ndcg_at_k([1.0, 2.0], [0, 1], [2], **kwargs)


def test_ndcg_negative_gain_rejected():
    with pytest.raises(ValueError):
        scored_ndcg_at_k([1.0, 2.0], [0, -1], [2])


def _obvious_case():
    """Feature 0 sorts every question perfectly; feature 1 is its exact opposite."""
    gains = np.array([3, 2, 0, 0, 1, 0, 0, 2, 0], dtype=float)
    good = gains + np.array([0.0, 0.1, 0.2, 0.3, 0.0, 0.1, 0.2, 0.3, 0.4])  # same order as the gains
    features = np.column_stack([good, -good])
    return features, gains, [4, 5]


def test_coordinate_ascent_finds_the_obvious_weight():
    features, gains, groups = _obvious_case()
    model = fit_linear_fusion(
        features, gains, groups, method="coordinate_ascent", feature_names=("good", "bad")
    )
    # From equal weights (which tie every candidate) the smallest step that ranks perfectly is +0.005 on
    # the good feature; weights are then rescaled to L1 norm 1.
    assert model.weights == pytest.approx((0.505 / 1.005, 0.5 / 1.005))
    assert model.details["train_ndcg"] == 1.0
    assert model.feature_names == ("good", "bad")
    ranked = rank_within_groups(model.score(features, groups), groups)
    assert [gains[r].tolist() for r in ranked] == [[3, 2, 0, 0], [2, 1, 0, 0, 0]]


def test_pairwise_finds_the_obvious_weight():
    features, gains, groups = _obvious_case()
    model = fit_linear_fusion(features, gains, groups)  # pairwise is the default
    assert model.weights == pytest.approx((0.5, -0.5))  # symmetric problem, L1 norm 1
    assert model.details["train_ndcg"] == 1.0


def test_learner_picks_the_informative_feature_among_noise():
    rng = np.random.default_rng(0)
    sizes = np.full(40, 30)
    gains = np.where(rng.random(sizes.sum()) < 0.1, rng.integers(1, 4, sizes.sum()), 0).astype(float)
    noise = rng.normal(size=sizes.sum())
    features = np.column_stack([noise, gains + rng.normal(0, 0.3, sizes.sum())])
    for method in ("coordinate_ascent", "pairwise"):
        model = fit_linear_fusion(features, gains, sizes, method=method)
        assert abs(model.weights[1]) > 3 * abs(model.weights[0]) and model.weights[1] > 0, method
        assert sum(abs(w) for w in model.weights) == pytest.approx(1.0)


def test_learner_is_deterministic():
    rng = np.random.default_rng(1)
    sizes = np.full(20, 25)
    gains = rng.integers(0, 4, sizes.sum()).astype(float)
    features = rng.normal(size=(sizes.sum(), 3)) + gains[:, None] * np.array([0.5, 0.2, 0.0])
    for method in ("pairwise", "coordinate_ascent"):
        first = fit_linear_fusion(features, gains, sizes, method=method)
        assert fit_linear_fusion(features, gains, sizes, method=method).weights == first.weights


def test_learner_ignores_questions_without_relevant_answers():
    features, gains, groups = _obvious_case()
    extra = np.vstack([features, [[0.0, 0.0], [1.0, -1.0]]])
    model = fit_linear_fusion(extra, np.concatenate([gains, [0, 0]]), [*groups, 2])
    assert model.details["questions"] == 2


def test_learner_uses_the_given_ideal():
    features, gains, groups = _obvious_case()
    model = fit_linear_fusion(features, gains, groups, ideal_dcg=[100.0, 100.0])
    assert model.details["train_ndcg"] < 0.1


def test_bagged_coordinate_ascent_is_deterministic_and_normalised():
    features, gains, groups = _obvious_case()
    model = fit_linear_fusion(features, gains, groups, method="coordinate_ascent", bags=3, restarts=0)
    again = fit_linear_fusion(features, gains, groups, method="coordinate_ascent", bags=3, restarts=0)
    assert model.weights == again.weights and model.details["bags"] == 3
    assert sum(abs(w) for w in model.weights) == pytest.approx(1.0)
    assert model.weights[0] > model.weights[1]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"method": "lambdamart"},
        {"feature_names": ("only one",)},
        {"method": "coordinate_ascent", "start": [0.0, 0.0]},
        {"method": "coordinate_ascent", "start": [1.0]},
        {"ideal_dcg": [1.0]},
        {"method": "pairwise", "l2": -1.0},
        {"method": "coordinate_ascent", "bags": -1},
    ],
)
def test_learner_bad_input(kwargs):
    features, gains, groups = _obvious_case()
    with pytest.raises(ValueError):
        fit_linear_fusion(features, gains, groups, **kwargs)


def test_learner_bad_gains_and_features():
    features, gains, groups = _obvious_case()
    with pytest.raises(ValueError):
        fit_linear_fusion(features, gains[:-1], groups)
    with pytest.raises(ValueError):
        fit_linear_fusion(features, -gains, groups)
    with pytest.raises(ValueError):
        fit_linear_fusion(np.zeros((9, 0)), gains, groups)


def test_linear_fusion_score_checks_columns():
    model = LinearFusion(weights=(1.0, 0.0))
    assert model.score([[1.0, 5.0], [3.0, 0.0]], [2]).tolist() == pytest.approx([-1.0, 1.0])
    with pytest.raises(ValueError):
        model.score([[1.0], [2.0]], [2])
