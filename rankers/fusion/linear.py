"""The learned linear fusion: coordinate ascent on mean NDCG@k (or pairwise logistic), and raw-feature
weights a search engine can compute itself."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankers.fusion.ascent import _best_of_starts, _l1, _Objective, _pick_groups
from rankers.fusion.groups import FloatArray, _as_matrix, _group_ids, check_groups
from rankers.fusion.ndcg import _check_k, ideal_dcg_from_labels
from rankers.fusion.pairwise import _pairwise_logistic
from rankers.fusion.zscore import zscore_by_group

#: Seed of the learner's random restarts (coordinate ascent); training is deterministic given the data.
SEED = 20240601


@dataclass(frozen=True)
class LinearFusion:
    """``score = sum_f weights[f] * z_f`` with ``z`` the per-question z-scores of the features.

    ``weights`` has L1 norm 1 (only the ratios matter to a ranking). ``details``: how it was learned
    (method, training NDCG, rounds, ...), for display.
    """

    weights: tuple[float, ...]
    feature_names: tuple[str, ...] = ()
    details: dict = field(default_factory=dict, compare=False)

    def score(self, features: ArrayLike, groups: ArrayLike) -> FloatArray:
        """Fused score of each row of ``features`` (n, len(weights)), z-scored within ``groups``."""
        matrix, _ = _as_matrix(features, "features")
        if matrix.shape[1] != len(self.weights):
            raise ValueError(f"features have {matrix.shape[1]} columns, the fusion has {len(self.weights)}")
        return zscore_by_group(matrix, groups) @ np.asarray(self.weights, dtype=np.float64)


def _checked_fit_inputs(
    features: ArrayLike, gains: ArrayLike, groups: ArrayLike, k: int
) -> tuple[FloatArray, FloatArray, NDArray[np.bool_], NDArray[np.int64], int]:
    """What both fits take, checked: the feature matrix, the gains (NaN: unrated), which are rated, the
    group sizes and k; a ValueError naming what is wrong."""
    matrix, _ = _as_matrix(features, "features")
    g = np.asarray(gains, dtype=np.float64)
    if g.shape != (len(matrix),):
        raise ValueError("gains must hold one value per row of features")
    known = ~np.isnan(g)
    if not np.all(np.isfinite(g[known])) or np.any(g[known] < 0):
        raise ValueError("gains must be finite and >= 0 (NaN: unknown)")
    return matrix, g, known, check_groups(groups, len(matrix)), _check_k(k)


def fit_linear_fusion(
    features: ArrayLike,
    gains: ArrayLike,
    groups: ArrayLike,
    *,
    ideal_dcg: ArrayLike | None = None,
    k: int = 10,
    method: str = "pairwise",
    feature_names: Sequence[str] = (),
    start: ArrayLike | None = None,
    restarts: int = 4,
    bags: int = 0,
    max_rounds: int = 20,
    tolerance: float = 1e-5,
    l2: float = 1e-3,
    seed: int = SEED,
) -> LinearFusion:
    """Learn ``LinearFusion`` weights over z-scored ``features`` from the training questions' labels.

    ``features``: (n, f), rows grouped by question (``groups``); ``gains``: each row's stars, NaN when
    unrated. An unrated candidate is unknown, not bad: it is z-scored with its question's candidates
    (as at ranking time) but neither its pairs nor its place count in the fit; ``ideal_dcg``: each question's IDCG@k from all its labels (``ideal_dcg_from_labels``).
    Only training questions may be passed: the caller must not pass the labels of test questions.

    Methods:

    * ``"pairwise"`` (default): RankNet with a linear scorer: the logistic loss over every pair of
      candidates of a question with different labels, weighted by their gain difference, plus an L2
      penalty ``l2``; a smooth convex problem solved exactly by Newton's method.
    * ``"coordinate_ascent"``: Metzler & Croft's coordinate ascent, maximising mean NDCG@k of the
      training questions directly. Each round tries, for each weight in turn, its value plus each
      step in ``_STEPS`` (weights then rescaled to L1 norm 1) and keeps the best strict improvement
      (the smallest move among ties, since NDCG is piecewise constant); rounds stop when one gains less
      than ``tolerance``. It starts from ``start`` (default: equal weights, i.e. the untrained fusion of
      the features) and from ``restarts`` random points (fixed ``seed``), and keeps the best start
      (training NDCG; the earliest on a tie, so the equal-weights start wins ties). With ``bags`` > 0,
      this is done on ``bags`` bootstrap samples of the questions and the weights (L1 norm 1) are
      averaged (bagging: steadier weights when a few questions sway the optimum).

    Why pairwise is the default: chosen by 5-fold cross-validation on the TRAINING questions of both
    Cranfield editions (``bench/experiment_fusion.py --cv``), where it was best or within 0.003 NDCG@10
    of the best variant. It is also the steady one: the loss is convex, so the weights are unique and
    move smoothly with the labels, whereas coordinate ascent optimises a piecewise-constant objective
    whose optimum jumps with a few questions (on Cranfield its test NDCG varied by +-0.02 between
    random subsets of the same size, and was lower with all labels than with half of them). Pairwise
    fits in ~0.05 s for 150 questions x 100 candidates; coordinate ascent ~1 s (bagged: ~10x that).
    """
    matrix, g, known, sizes, k = _checked_fit_inputs(features, gains, groups, k)
    names = tuple(feature_names)
    if names and len(names) != matrix.shape[1]:
        raise ValueError("feature_names must name every column of features")
    if matrix.shape[1] == 0:
        raise ValueError("features need at least one column")
    if ideal_dcg is None:
        offsets = np.cumsum(sizes) - sizes
        ideal = ideal_dcg_from_labels(
            [np.nan_to_num(g[o : o + s]) for o, s in zip(offsets, sizes, strict=True)], k
        )
    else:
        ideal = np.asarray(ideal_dcg, dtype=np.float64)
        if ideal.shape != sizes.shape or np.any(ideal < 0) or not np.all(np.isfinite(ideal)):
            raise ValueError("ideal_dcg must hold one finite value >= 0 per group")
    # z-scores over every candidate, as ranking computes them; then only the rated rows teach.
    z = zscore_by_group(matrix, sizes)
    if not known.all():
        z, g = z[known], g[known]
        sizes = np.bincount(_group_ids(sizes)[known], minlength=len(sizes)).astype(np.int64)
    objective = _Objective(z, g, sizes, ideal, k)
    f = matrix.shape[1]
    if method == "coordinate_ascent":
        if start is None:
            first = np.ones(f)
        else:
            first = np.asarray(start, dtype=np.float64)
            if first.shape != (f,) or not np.all(np.isfinite(first)) or not np.any(first):
                raise ValueError("start must be f finite weights, not all zero")
        if isinstance(bags, bool) or not isinstance(bags, (int, np.integer)) or bags < 0:
            raise ValueError("bags must be an int >= 0")
        rng = np.random.default_rng(seed)
        if bags == 0:
            w, value, rounds, tried = _best_of_starts(
                objective, first, rng, restarts=restarts, max_rounds=max_rounds, tolerance=tolerance
            )
            details = {"method": method, "train_ndcg": value, "rounds": rounds, "starts": tried}
        else:
            bagged = []
            for _ in range(bags):
                picks = rng.integers(0, len(sizes), size=len(sizes))
                sample = _Objective(*_pick_groups(z, g, sizes, ideal, picks), k)
                bagged.append(
                    _best_of_starts(
                        sample, first, rng, restarts=restarts, max_rounds=max_rounds, tolerance=tolerance
                    )[0]
                )
            w = _l1(np.mean(bagged, axis=0))
            details = {
                "method": method,
                "train_ndcg": objective(w),
                "bags": bags,
                "bag_weights_sd": [round(float(x), 4) for x in np.std(bagged, axis=0)],
            }
    elif method == "pairwise":
        if l2 < 0 or not np.isfinite(l2):
            raise ValueError("l2 must be >= 0")
        w, info = _pairwise_logistic(z, g, sizes, l2=l2)
        w = _l1(w)
        details = {"method": method, "train_ndcg": objective(w), "l2": l2, **info}
    else:
        raise ValueError(f"method must be 'coordinate_ascent' or 'pairwise', not {method!r}")
    details["questions"] = objective.count
    return LinearFusion(weights=tuple(float(x) for x in w), feature_names=names, details=details)


def fit_linear_weights(
    features: ArrayLike,
    gains: ArrayLike,
    groups: ArrayLike,
    *,
    ideal_dcg: ArrayLike,
    k: int = 10,
    nonnegative: bool = False,
    start: ArrayLike | None = None,
    restarts: int = 4,
    max_rounds: int = 20,
    tolerance: float = 1e-5,
    seed: int = SEED,
) -> tuple[FloatArray, dict]:
    """Weights ``w`` (L1 norm 1) of ``score = features @ w`` over the features AS GIVEN (no z-scores),
    by ``fit_linear_fusion``'s coordinate ascent on the training questions' mean judged-only NDCG@k of
    each top k (``_judged_top_k_matrix``: every candidate is ranked, the unrated ones in the top k are
    then removed), the measure the champion/challenger test uses.

    For a scorer that must be computed elsewhere, e.g. inside a search engine (``rankers.export``), which
    cannot z-score within a question, and has no cross-validation guard: condensing every candidate
    instead (rated rows only) let a fit fill the top k with unrated answers for free.
    ``gains``: NaN for an unrated candidate; ``ideal_dcg``: each question's IDCG@k from all its labels. ``nonnegative``:
    every weight stays >= 0. ``start`` (default: equal weights) is the first start, then ``restarts``
    random ones (fixed ``seed``); the best training NDCG wins, the earliest start on a tie. Returns
    ``(w, details)``.
    """
    matrix, g, known, sizes, k = _checked_fit_inputs(features, gains, groups, k)
    ideal = np.asarray(ideal_dcg, dtype=np.float64)
    if ideal.shape != sizes.shape or np.any(ideal < 0) or not np.all(np.isfinite(ideal)):
        raise ValueError("ideal_dcg must hold one finite value >= 0 per group")
    f = matrix.shape[1]
    first = np.ones(f) if start is None else np.asarray(start, dtype=np.float64)
    if f == 0 or first.shape != (f,) or not np.all(np.isfinite(first)) or not np.any(first):
        raise ValueError("features need a column; start must be f finite weights, not all zero")
    objective = _Objective(matrix, g, sizes, ideal, k, known=known)
    w, value, rounds, tried = _best_of_starts(
        objective,
        first,
        np.random.default_rng(seed),
        restarts=restarts,
        max_rounds=max_rounds,
        tolerance=tolerance,
        nonnegative=nonnegative,
    )
    details = {
        "method": "coordinate_ascent",
        "train_ndcg": value,
        "rounds": rounds,
        "starts": tried,
        "nonnegative": nonnegative,
        "questions": objective.count,
    }
    return w, details
