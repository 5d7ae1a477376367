"""Fitting the builtin ranker's LambdaMART model: a pure function of feature and target arrays.

Which labels and questions it learns from, and whether a version uses the model, is the training loop's
business (``trainer.learner``); this module only fits and stores.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np
from django.conf import settings

from rankers.features import FEATURE_NAMES, FEATURE_VERSION
from rankers.signals import RatedQuestions


def _lgb_params(
    params: dict[str, Any], *, exponential_gain: bool, truncation: int, seed: int
) -> dict[str, Any]:
    label_gain = [0, 1, 3, 7] if exponential_gain else [0, 1, 2, 3]
    return {
        "objective": "lambdarank",
        "label_gain": label_gain,
        "lambdarank_truncation_level": max(truncation, 10),
        "metric": "None",
        "verbosity": -1,
        "num_threads": 1,
        "deterministic": True,
        "force_row_wise": True,
        "seed": seed,
        "feature_pre_filter": False,
        **params,
    }


def lambdamart_fit(
    *,
    features: np.ndarray,
    targets: np.ndarray,
    groups: list[int],
    params: dict[str, Any],
    exponential_gain: bool,
    truncation: int,
    seed: int,
    feature_names: list[str] | None = None,
) -> lgb.Booster:
    """A LambdaMART model of candidates' ``features`` (rows grouped by question, ``groups`` their sizes)
    for ``targets`` (stars 0–3), deterministic for given inputs (one thread, fixed seed)."""
    dataset = lgb.Dataset(
        features, targets, group=groups, feature_name=feature_names or list(FEATURE_NAMES), free_raw_data=True
    )
    full = _lgb_params(params, exponential_gain=exponential_gain, truncation=truncation, seed=seed)
    rounds = full.pop("num_iterations")
    return lgb.train(full, dataset, num_boost_round=rounds)


def model_file_write(
    *,
    ranker_id: int,
    label: str,
    model_text: str,
    params: dict[str, Any] | None,
    signals: list[str] | None = None,
) -> str:
    """Write the model and its metadata under MODEL_DIR; returns the path relative to MODEL_DIR."""
    digest = hashlib.sha256(model_text.encode()).hexdigest()[:12]
    relative = Path("models") / f"ranker-{ranker_id}" / f"{label}-{digest}.txt"
    path = Path(settings.MODEL_DIR) / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = {
        "features": list(FEATURE_NAMES) + list(signals or []),
        "feature_version": FEATURE_VERSION,
        "params": params,
    }
    path.with_suffix(".json").write_text(json.dumps(meta))
    tmp = path.with_suffix(".tmp")
    tmp.write_text(model_text)
    tmp.replace(path)
    return str(relative)


def rated_file_write(*, ranker_id: int, label: str, rated: RatedQuestions, answer_ids: Sequence[str]) -> str:
    """Store the rated training questions a version propagates from; returns the path under MODEL_DIR.

    The name carries a hash of the content, as a model file's does: a process that cached one file by
    its path never mistakes another version's (a label reused after a version was deleted) for it.
    """
    directory = Path(settings.MODEL_DIR) / "models" / f"ranker-{ranker_id}"
    staged = directory / f".{label}-rated.npz"
    rated.save(staged, answer_ids)
    digest = hashlib.sha256(staged.read_bytes()).hexdigest()[:12]
    relative = Path("models") / f"ranker-{ranker_id}" / f"{label}-{digest}-rated.npz"
    staged.replace(Path(settings.MODEL_DIR) / relative)
    return str(relative)
