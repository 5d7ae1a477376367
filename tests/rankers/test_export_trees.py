"""The tree export model: LightGBM's trees in the neutral form and in the two LTR plugins' formats, and the
split semantics (LightGBM and Solr go left on ``x <= t``, XGBoost on ``x < t``) checked with an evaluator
per format: every float32 value, one exactly at a threshold included, lands on the same side."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rankers.export.trees import (
    float32_above,
    float32_at_most,
    lambdamart_params,
    predict_solr_trees,
    predict_trees,
    predict_xgboost_trees,
    solr_trees,
    trees_from_lightgbm,
    xgboost_trees,
)
from rankers.fitting import lambdamart_fit
from tests.rankers.export_support import TREES

NAMES = ["original", "bm25_title", "bm25_text", "phrase_title", "phrase_text"]


def test_float32_at_most_rounds_down_to_a_float32():
    assert float32_at_most(0.1) == 0.09999999403953552  # float32(0.1) is 0.10000000149..., above 0.1
    assert float32_at_most(0.25) == 0.25  # a float32 already
    assert float32_at_most(1e-46) == 0.0  # below the smallest subnormal float32


def test_float32_above_is_the_next_float32():
    assert float32_above(0.25) == 0.25000002980232239
    assert float32_above(0.0) == 1.401298464324817e-45


def _rows(values: list[list[float]]) -> np.ndarray:
    return np.asarray(values, dtype=np.float32).astype(np.float64)


def test_a_value_exactly_at_a_threshold_goes_left_in_every_format():
    just_above = float32_above(1.5)
    rows = _rows(
        [
            [0, 1.5, 0, 0, 0.25],  # both splits exactly at their thresholds: left, left
            [0, 1.5, 0, 0, float32_above(0.25)],  # left, then just above: right
            [0, just_above, 0, 0, 0],  # just above the root's threshold: right
            [0, 1.0, 0, 0, 0.0],
        ]
    )
    expected = [-0.5 + 0.125, 0.75 + 0.125, 2.0 + 0.125, -0.5 + 0.125]

    assert predict_trees(TREES, rows).tolist() == expected
    assert predict_solr_trees(solr_trees(TREES, NAMES), NAMES, rows).tolist() == expected
    assert predict_xgboost_trees(xgboost_trees(TREES, NAMES), NAMES, rows).tolist() == expected


def test_solr_trees_are_the_documented_json():
    assert solr_trees(TREES, NAMES) == [
        {
            "weight": "1",
            "root": {
                "feature": "bm25_title",
                "threshold": "1.5",
                "left": {
                    "feature": "phrase_text",
                    "threshold": "0.25",
                    "left": {"value": "-0.5"},
                    "right": {"value": "0.75"},
                },
                "right": {"value": "2.0"},
            },
        },
        {"weight": "1", "root": {"value": "0.125"}},
    ]


def test_xgboost_trees_are_the_dump_format_with_thresholds_just_above():
    assert xgboost_trees(TREES, NAMES) == [
        {
            "nodeid": 0,
            "depth": 0,
            "split": "bm25_title",
            "split_condition": 1.5000001192092896,
            "yes": 1,
            "no": 4,
            "missing": 1,
            "children": [
                {
                    "nodeid": 1,
                    "depth": 1,
                    "split": "phrase_text",
                    "split_condition": 0.25000002980232239,
                    "yes": 2,
                    "no": 3,
                    "missing": 2,
                    "children": [{"nodeid": 2, "leaf": -0.5}, {"nodeid": 3, "leaf": 0.75}],
                },
                {"nodeid": 4, "leaf": 2.0},
            ],
        },
        {"nodeid": 0, "leaf": 0.125},
    ]


@pytest.fixture(scope="module")
def booster():
    rng = np.random.default_rng(7)
    groups = [20] * 30
    features = rng.gamma(2.0, 3.0, size=(sum(groups), 5)).astype(np.float32).astype(np.float64)
    targets = np.clip(np.round(features[:, 1] / 4 + rng.normal(0, 0.7, len(features))), 0, 3)
    return lambdamart_fit(
        features=features,
        targets=targets,
        groups=groups,
        params=lambdamart_params(5),
        exponential_gain=False,
        truncation=10,
        seed=1,
        feature_names=NAMES,
    )


def _threshold_rows(trees: list[dict]) -> np.ndarray:
    """Rows that put every feature exactly at, just below and just above each threshold of the trees."""
    found: list[tuple[int, float]] = []

    def walk(node):
        if "value" not in node:
            found.append((node["feature"], node["threshold"]))
            walk(node["left"])
            walk(node["right"])

    for tree in trees:
        walk(tree)
    rows = []
    for column, threshold in found:
        for value in (threshold, float32_above(threshold), float32_at_most(np.nextafter(threshold, -np.inf))):
            row = np.full(5, value)
            rows.append(row)
            single = np.zeros(5)
            single[column] = value
            rows.append(single)
    return _rows(rows)


def test_lightgbm_trees_convert_with_the_same_scores_in_every_format(booster):
    trees = trees_from_lightgbm(booster)
    rows = np.vstack([_threshold_rows(trees), _rows(np.random.default_rng(3).gamma(2.0, 3.0, size=(200, 5)))])

    lightgbm = np.asarray(booster.predict(rows, num_threads=1))
    neutral = predict_trees(trees, rows)
    solr = predict_solr_trees(json.loads(json.dumps(solr_trees(trees, NAMES))), NAMES, rows)
    xgboost = predict_xgboost_trees(json.loads(json.dumps(xgboost_trees(trees, NAMES))), NAMES, rows)

    assert len(trees) == 100 and len(rows) > 200
    np.testing.assert_allclose(neutral, lightgbm, rtol=0, atol=1e-12)
    # Solr and XGBoost read leaf values as float32: the same leaves, a float32 rounding apart.
    np.testing.assert_allclose(solr, lightgbm, rtol=0, atol=1e-5)
    np.testing.assert_allclose(xgboost, lightgbm, rtol=0, atol=1e-5)
    np.testing.assert_array_equal(solr, xgboost)


def test_lambdamart_params_make_every_feature_monotone():
    assert lambdamart_params(3)["monotone_constraints"] == [1, 1, 1]


class _Dump:
    def __init__(self, node):
        self.node = node

    def dump_model(self):
        return {"tree_info": [{"tree_structure": self.node}]}


@pytest.mark.parametrize(
    "split",
    [
        {"decision_type": "==", "missing_type": "None"},  # categorical
        {"decision_type": "<=", "missing_type": "Zero"},  # zero as missing
    ],
)
def test_trees_without_an_engine_equivalent_are_refused(split):
    node = {
        "split_feature": 0,
        "threshold": 1.0,
        "left_child": {"leaf_value": 1.0},
        "right_child": {"leaf_value": 2.0},
        **split,
    }

    with pytest.raises(ValueError, match="has no engine equivalent"):
        trees_from_lightgbm(_Dump(node))
