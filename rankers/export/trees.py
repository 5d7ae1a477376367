"""The tree export model: a LightGBM LambdaMART model over the same engine features, and its conversion to
the two Learning-to-Rank plugins' formats, with one evaluator per format.

Split semantics (value ``x`` of the split's feature, threshold ``t``):

=====================================  ================  ===================================================
format                                 goes left when    threshold written here
=====================================  ================  ===================================================
LightGBM (``dump_model``, numerical)   ``x <= t``        ``t``: a float64
neutral (stored in the export model)   ``x <= t``        ``t32``: the largest float32 <= t
Solr ``MultipleAdditiveTreesModel``    ``x <= t``        ``t32`` (Solr reads a float)
XGBoost JSON (``model/xgboost+json``)  ``x < t``         ``nextafter32(t32, +inf)``: the next float32 above
=====================================  ================  ===================================================

The engines compute features as float32. For a float32 ``x``: ``x <= t`` iff ``x <= t32`` (no float32
lies in ``(t32, t]``), and ``x <= t32`` iff ``x < nextafter32(t32, +inf)`` (none lies between them either).
So every format sends every float32 value, one exactly at a threshold included, to the same side as
LightGBM does (tests/rankers/test_export_trees.py). LightGBM's missing-value handling is not needed:
features are never missing (a query that does not match scores 0), so a split must be numerical with
``missing_type`` None or NaN; anything else (a categorical split, zero-as-missing) is refused.

A model's score is the sum of its trees' leaf values (LightGBM's shrinkage is already in them; each Solr
tree has weight 1; XGBoost's base score is left out: it shifts every answer alike).
"""

from __future__ import annotations

from typing import Any

import lightgbm as lgb
import numpy as np

Tree = dict[str, Any]

#: The tree model's LightGBM settings: the builtin learner's (``trainer.learner``), fitted by
#: ``rankers.fitting.lambdamart_fit`` on the rated candidates (and an imported ground truth's unlisted ones
#: at 0 stars: ``trainer.engine_export``); see ``lambdamart_params``.
LAMBDAMART_PARAMS: dict[str, Any] = {
    "num_leaves": 7,
    "min_data_in_leaf": 20,
    "learning_rate": 0.05,
    "num_iterations": 100,
}


def lambdamart_params(features: int) -> dict[str, Any]:
    """``LAMBDAMART_PARAMS`` with every feature monotone increasing (``monotone_constraints`` 1).

    Every export feature is a match score, so more of it is never evidence against an answer. Fitted on
    rated candidates only, an unconstrained model learns which rated answers are the better ones and
    extrapolates freely to the unrated majority of the top K: on the Cranfield demo (test NDCG@10, the
    engine alone 0.328 on OpenSearch, 0.337 on Solr) it ranked 0.139 and 0.114; monotone, 0.316 and
    0.349 (``bench/bench_export.py --variants``)."""
    return {**LAMBDAMART_PARAMS, "monotone_constraints": [1] * features}


def float32_at_most(threshold: float) -> float:
    """The largest float32 that is <= ``threshold`` (as a Python float, exactly)."""
    value = np.float32(threshold)
    if float(value) > threshold:
        value = np.nextafter(value, np.float32(-np.inf))
    return float(value)


def float32_above(value: float) -> float:
    """The next float32 above the float32 ``value``."""
    return float(np.nextafter(np.float32(value), np.float32(np.inf)))


def _neutral(node: dict[str, Any]) -> Tree:
    if "leaf_value" in node:
        return {"value": float(node["leaf_value"])}
    if node.get("decision_type") != "<=" or node.get("missing_type", "None") not in ("None", "NaN"):
        raise ValueError(
            f"a split with decision {node.get('decision_type')!r} and missing type "
            f"{node.get('missing_type')!r} has no engine equivalent"
        )
    return {
        "feature": int(node["split_feature"]),
        "threshold": float32_at_most(float(node["threshold"])),
        "left": _neutral(node["left_child"]),
        "right": _neutral(node["right_child"]),
    }


def trees_from_lightgbm(booster: lgb.Booster) -> list[Tree]:
    """The booster's trees in the neutral form: ``{"feature": column, "threshold": t32, "left", "right"}``
    or ``{"value": leaf}``; left when ``x <= threshold``."""
    return [_neutral(tree["tree_structure"]) for tree in booster.dump_model()["tree_info"]]


def _walk(tree: Tree, row: np.ndarray) -> float:
    while "value" not in tree:
        tree = tree["left"] if row[tree["feature"]] <= tree["threshold"] else tree["right"]
    return tree["value"]


def predict_trees(trees: list[Tree], values: np.ndarray) -> np.ndarray:
    """Score of each row of ``values`` under the neutral trees (``x <= t``: left)."""
    rows = np.asarray(values, dtype=np.float64)
    return np.array([sum(_walk(t, row) for t in trees) for row in rows], dtype=np.float64)


# --- Solr MultipleAdditiveTreesModel ------------------------------------------------------------------


def _solr_node(tree: Tree, names: list[str]) -> dict[str, Any]:
    if "value" in tree:
        return {"value": repr(tree["value"])}
    return {
        "feature": names[tree["feature"]],
        "threshold": repr(tree["threshold"]),
        "left": _solr_node(tree["left"], names),
        "right": _solr_node(tree["right"], names),
    }


def solr_trees(trees: list[Tree], names: list[str]) -> list[dict[str, Any]]:
    """``params.trees`` of a Solr ``MultipleAdditiveTreesModel``: ``{"weight": "1", "root": ...}`` each,
    numbers as text as the Solr reference guide writes them."""
    return [{"weight": "1", "root": _solr_node(t, names)} for t in trees]


def predict_solr_trees(trees: list[dict[str, Any]], names: list[str], values: np.ndarray) -> np.ndarray:
    """Solr's evaluation: ``x <= threshold`` goes left, thresholds and values read as float32."""
    column = {name: i for i, name in enumerate(names)}
    rows = np.asarray(values, dtype=np.float32)
    out = []
    for row in rows:
        total = 0.0
        for tree in trees:
            node = tree["root"]
            while "value" not in node:
                left = row[column[node["feature"]]] <= np.float32(float(node["threshold"]))
                node = node["left"] if left else node["right"]
            total += float(tree["weight"]) * float(np.float32(float(node["value"])))
        out.append(total)
    return np.array(out)


# --- XGBoost JSON (OpenSearch LTR model/xgboost+json) ---------------------------------------------------


def _xgboost_node(tree: Tree, names: list[str], counter: list[int], depth: int) -> dict[str, Any]:
    nodeid = counter[0]
    counter[0] += 1
    if "value" in tree:
        return {"nodeid": nodeid, "leaf": tree["value"]}
    left = _xgboost_node(tree["left"], names, counter, depth + 1)
    right = _xgboost_node(tree["right"], names, counter, depth + 1)
    return {
        "nodeid": nodeid,
        "depth": depth,
        "split": names[tree["feature"]],
        "split_condition": float32_above(tree["threshold"]),
        "yes": left["nodeid"],
        "no": right["nodeid"],
        "missing": left["nodeid"],
        "children": [left, right],
    }


def xgboost_trees(trees: list[Tree], names: list[str]) -> list[dict[str, Any]]:
    """The trees as XGBoost's JSON dump (``get_dump(dump_format="json")``): ``yes`` when
    ``x < split_condition``."""
    return [_xgboost_node(t, names, [0], 0) for t in trees]


def predict_xgboost_trees(trees: list[dict[str, Any]], names: list[str], values: np.ndarray) -> np.ndarray:
    """XGBoost's (and the OpenSearch LTR plugin's) evaluation: ``x < split_condition`` goes to ``yes``,
    as float32."""
    column = {name: i for i, name in enumerate(names)}
    rows = np.asarray(values, dtype=np.float32)
    out = []
    for row in rows:
        total = 0.0
        for tree in trees:
            node = tree
            while "leaf" not in node:
                target = (
                    node["yes"]
                    if row[column[node["split"]]] < np.float32(node["split_condition"])
                    else node["no"]
                )
                node = next(child for child in node["children"] if child["nodeid"] == target)
            total += float(np.float32(node["leaf"]))
        out.append(total)
    return np.array(out)
