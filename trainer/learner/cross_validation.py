"""Cross-validation of a candidate over fold assignments of the training questions, and its figures."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from corpus.models import Collection
from evaluation.metrics.ranking import mean_ignoring_undefined
from evaluation.metrics.stats import compare_runs
from rankers.index import CollectionIndex

from .candidates import SEED, _Candidate, _ndcg, _order, _rated_share
from .examples import QuestionExample, rated_questions

CV_FOLDS = 5
FOLD_SEEDS = (20240601, 7, 1234)


def _folds(n: int, k: int, seed: int) -> list[np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    return [order[i::k] for i in range(k)]


def _mean(values: np.ndarray) -> float | None:
    result = mean_ignoring_undefined(values)
    return None if math.isnan(result.mean) else round(result.mean, 6)


def _cross_validate(
    make: Callable[[], _Candidate],
    examples: list[QuestionExample],
    index: CollectionIndex,
    *,
    collection: Collection,
    semantic: bool,
) -> tuple[np.ndarray, list[float], float]:
    """(per-question held-out judged-only NDCG@k averaged over the fold assignments, each assignment's
    mean, the mean share of held-out top-k positions that hold a rated answer)."""
    per_assignment = []
    shares = []
    for seed in FOLD_SEEDS:
        per_question = np.full(len(examples), np.nan)
        for held_out in _folds(len(examples), min(CV_FOLDS, len(examples)), seed):
            held = set(held_out.tolist())
            train_set = [e for i, e in enumerate(examples) if i not in held]
            rated = rated_questions(train_set, index) if semantic else None
            candidate = make()
            if candidate.trained:
                candidate.fit(train_set, rated)
            held_examples = [examples[i] for i in held_out]
            rankings = [_order(e, candidate.scores(e, rated)) for e in held_examples]
            per_question[held_out] = _ndcg(rankings, held_examples, collection=collection)
            shares.append(_rated_share(rankings, held_examples, collection.ndcg_k))
        per_assignment.append(per_question)
    stacked = np.vstack(per_assignment)
    means = [float(np.nanmean(row)) if np.any(~np.isnan(row)) else math.nan for row in stacked]
    # A question without a relevant label has no NDCG in any assignment: it stays NaN (no warning).
    defined = ~np.isnan(stacked)
    counts = defined.sum(axis=0)
    totals = np.where(defined, stacked, 0.0).sum(axis=0)
    share = float(np.concatenate(shares).mean()) if shares else math.nan
    return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan), means, share


def _figures(diff_of: np.ndarray, than: np.ndarray) -> dict[str, float | int]:
    comparison = compare_runs(diff_of, than, n_resamples=2000, n_permutations=2000, seed=SEED)
    return {
        "difference": round(comparison.difference, 6),
        "ci_low": round(comparison.ci_low, 6),
        "ci_high": round(comparison.ci_high, 6),
        "p_value": round(comparison.p_value, 6),
        "questions": comparison.n,
    }
