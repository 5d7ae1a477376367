"""The linear export model: a weighted sum of the engine's raw feature values, weights >= 0.

::

    s(q, a) = sum_f w_f * x_{q,a,f}         x: the engine's own value of feature f (spec.py), w_f >= 0

Raw, not z-scored: an engine's rescore query cannot standardise within a question's candidates, so the
model is one the engine computes as it stands (``render/``). Weights are fitted by coordinate ascent on
the training questions' mean judged-only NDCG@k of each top k: every candidate is ranked, the unrated
ones in the top k are removed (an unrated answer is unknown, not 0 stars: ``trainer.learner``), as the
champion/challenger test scores a version; gains as the collection counts them (``2^stars - 1`` for the
exponential scheme), and the ideal DCG from every label of the question (``rankers.fusion.
fit_linear_weights``). The first start is the engine alone (all weight on ``original``), so the fit never
ends below the engine's own training NDCG; then random restarts.

Why weights >= 0: OpenSearch 2.19 refuses a negative boost ("negative [boost] are not allowed ..., use a
value between 0 and 1 to deboost", checked against the tests' node), and Lucene's scores must not be
negative; Solr 9.10 takes a negative ``reRankWeight``, but one model serves every format, so none is
negative anywhere.

Coordinate ascent works on features divided by their largest absolute training value (so its steps
suit BM25 scores and phrase scores alike); the weights are then divided by the same scales, so the
model applies to the raw values. They are stored as float32 numbers (what the engine multiplies with),
scaled so that ``original`` weighs 1 when it has any weight (else the largest weight is 1; all 0, which
ranks in the engine's order, becomes ``original`` alone, which ranks the same).
"""

from __future__ import annotations

import numpy as np

from rankers.fusion import fit_linear_weights


def fit_export_linear(
    values: np.ndarray,
    gains: np.ndarray,
    groups: list[int],
    *,
    ideal_dcg: np.ndarray,
    k: int,
    original: int = 0,
) -> tuple[list[float], dict]:
    """(weights, details) of the linear export model (module docstring). ``values``: (rows, features),
    grouped by question (``groups``); ``gains``: NaN for an unrated candidate; ``original``: the column
    of the engine's own score (the first start)."""
    x = np.asarray(values, dtype=np.float64)
    scale = np.abs(x).max(axis=0) if len(x) else np.ones(x.shape[1])
    scale = np.where(scale > 0, scale, 1.0)
    start = np.zeros(x.shape[1])
    start[original] = 1.0
    w, details = fit_linear_weights(
        x / scale, gains, groups, ideal_dcg=ideal_dcg, k=k, nonnegative=True, start=start
    )
    raw = w / scale
    top = raw[original] if raw[original] > 0 else raw.max()
    if top > 0:
        raw = raw / top
    else:  # all weights 0: the candidates' own order, which is the engine's score alone
        raw[original] = 1.0
    weights = [float(np.float32(v)) for v in raw]
    details = {**details, "scales": [float(s) for s in scale]}
    return weights, details


def linear_scores(values: np.ndarray, weights: list[float]) -> np.ndarray:
    """``s = x @ w`` for each row of ``values``."""
    return np.asarray(values, dtype=np.float64) @ np.asarray(weights, dtype=np.float64)
