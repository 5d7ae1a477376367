"""Training the built-in reranker: LightGBM LambdaMART on the gain labels of TRAINING questions only.

Test questions are what evaluations score the ranker on, so nothing about them may reach the model:
``training_examples`` reads labels through ``labels_for_collection(split="train")`` and only questions
whose split is train. (Features use BM25 statistics of the answers, which involve no labels.)

How a version is chosen, because on small collections a learned reranker is easily worse than BM25
(on Cranfield, LambdaMART on lexical features is within noise of BM25 with all training labels and
clearly worse with a tenth of them):

1. Each labelled training question contributes its top ``candidates`` BM25 answers as one ranking
   group; a candidate's target is its label's gain, or 0 when unlabelled.
2. ``CV_FOLDS``-fold cross-validation over the training questions (folds by question, fixed seed)
   scores every setting in ``PARAM_GRID`` and BM25's own order by mean NDCG@k of the held-out
   questions (the collection's k, gain scheme and discount; ideal DCG from all the question's labels,
   retrieved or not; computed by ``evaluation.metrics``).
3. The best setting is trained on all training questions. The version *uses* it only when its CV NDCG
   beats BM25's by at least ``MIN_CV_GAIN``; otherwise the version ranks exactly as BM25 does. Both CV
   figures are recorded on the version either way.

With fewer than ``MIN_QUESTIONS`` labelled training questions that have a relevant answer among their
candidates there is nothing to learn from: the version is plain BM25 and says why.

Training is deterministic (fixed seeds, one thread, LightGBM's ``deterministic`` mode): the same labels
give a byte-identical model.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import lightgbm as lgb
import numpy as np

from corpus.models import Collection, GainScheme, Question, Split
from evaluation.metrics.ranking import Discount as MetricDiscount
from evaluation.metrics.ranking import Gain, label_arrays, mean_ignoring_undefined, ndcg_at_k
from evaluation.metrics.stats import compare_runs
from rankers.builtin import bm25_candidates
from rankers.features import FEATURE_NAMES, FEATURE_VERSION, candidate_features
from rankers.fitting import lambdamart_fit
from rankers.index import CollectionIndex
from rankers.text import tokenize
from ratings.selectors import labels_for_collection

CV_FOLDS = 5
MIN_QUESTIONS = 10
MIN_CV_GAIN = 0.01
SEED = 20240601
PARAM_GRID: tuple[dict[str, Any], ...] = (
    {"num_leaves": 3, "min_data_in_leaf": 20, "learning_rate": 0.1, "num_iterations": 50},
    {"num_leaves": 7, "min_data_in_leaf": 20, "learning_rate": 0.05, "num_iterations": 100},
    {"num_leaves": 15, "min_data_in_leaf": 20, "learning_rate": 0.05, "num_iterations": 100},
    {"num_leaves": 7, "min_data_in_leaf": 50, "learning_rate": 0.05, "num_iterations": 300},
)


@dataclass
class QuestionExample:
    question_id: int
    external_id: str
    candidate_ids: list[str]
    features: np.ndarray
    targets: np.ndarray  # gain of each candidate, 0 when unlabelled
    labels: dict[str, int]  # every label of the question, retrieved or not (for ideal DCG)


@dataclass
class TrainingResult:
    uses_model: bool
    label_count: int
    question_count: int
    method: str = "bm25"
    cv_ndcg_model: float | None = None
    cv_ndcg_bm25: float | None = None
    params: dict[str, Any] | None = None
    model_text: str | None = None
    feature_importances: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)


def training_questions(*, collection: Collection) -> list[Question]:
    """Training-split questions of the collection that have at least one label, in id order."""
    ids = labels_for_collection(collection=collection, split=Split.TRAIN).values_list(
        "question_id", flat=True
    )
    return list(
        Question.objects.filter(collection=collection, split=Split.TRAIN, id__in=ids)
        .order_by("id")
        .distinct()
    )


def training_examples(
    *, collection: Collection, index: CollectionIndex, candidates: int
) -> list[QuestionExample]:
    """One example per labelled training question: its BM25 candidates, their features and targets."""
    labels: dict[int, dict[str, int]] = {}
    rows = labels_for_collection(collection=collection, split=Split.TRAIN).values_list(
        "question_id", "answer__external_id", "gain"
    )
    for question_id, answer_id, gain in rows:
        labels.setdefault(question_id, {})[answer_id] = gain
    examples = []
    for question in training_questions(collection=collection):
        terms = tokenize(question.text)
        positions, scores = bm25_candidates(index, terms, candidates)
        ids = [index.ids[p] for p in positions]
        known = labels[question.pk]
        examples.append(
            QuestionExample(
                question_id=question.pk,
                external_id=question.external_id,
                candidate_ids=ids,
                features=candidate_features(index, terms, positions, scores),
                targets=np.array([known.get(a, 0) for a in ids], dtype=np.float64),
                labels=known,
            )
        )
    return examples


def _ndcg(
    rankings: list[list[str]], examples: list[QuestionExample], *, collection: Collection
) -> np.ndarray:
    arrays = label_arrays(rankings, [e.labels for e in examples])
    return ndcg_at_k(
        arrays.retrieved,
        arrays.ideal,
        collection.ndcg_k,
        gain=cast(Gain, collection.gain_scheme),
        discount=cast(MetricDiscount, collection.discount),
    )


def _fit(
    examples: list[QuestionExample], params: dict[str, Any], *, exponential: bool, k: int
) -> lgb.Booster:
    return lambdamart_fit(
        features=np.vstack([e.features for e in examples]),
        targets=np.concatenate([e.targets for e in examples]),
        groups=[len(e.candidate_ids) for e in examples],
        params=params,
        exponential_gain=exponential,
        truncation=k,
        seed=SEED,
    )


def _reranked(booster: lgb.Booster, example: QuestionExample) -> list[str]:
    predicted = np.asarray(booster.predict(example.features, num_threads=1))
    return [example.candidate_ids[i] for i in np.argsort(-predicted, kind="stable")]


def _folds(n: int, k: int) -> list[np.ndarray]:
    order = np.random.default_rng(SEED).permutation(n)
    return [order[i::k] for i in range(k)]


def _mean(values: np.ndarray) -> float | None:
    result = mean_ignoring_undefined(values)
    return None if math.isnan(result.mean) else round(result.mean, 6)


def _no_progress(phase: str, fraction: float) -> None:
    pass


def train(
    *,
    collection: Collection,
    index: CollectionIndex,
    candidates: int,
    progress: Callable[[str, float], None] = _no_progress,
) -> TrainingResult:
    """Cross-validate, choose, and fit the reranker for the collection's current training labels.

    ``progress(phase, fraction)`` hears of each phase (collect-labels, compute-features,
    cross-validate, fit) as it goes.
    """
    started = time.perf_counter()
    progress("collect-labels", 0.0)
    examples = training_examples(collection=collection, index=index, candidates=candidates)
    progress("compute-features", 1.0)
    label_count = sum(len(e.labels) for e in examples)
    learnable = [e for e in examples if e.targets.max(initial=0) > 0]
    result = TrainingResult(uses_model=False, label_count=label_count, question_count=len(examples))
    bm25_all = _ndcg([e.candidate_ids for e in examples], examples, collection=collection)
    result.cv_ndcg_bm25 = _mean(bm25_all)
    result.details = {
        "candidates": candidates,
        "training_questions": len(examples),
        "learnable_questions": len(learnable),
        "feature_version": FEATURE_VERSION,
        "min_cv_gain": MIN_CV_GAIN,
    }
    if len(learnable) < MIN_QUESTIONS:
        result.details["reason"] = (
            f"Only {len(learnable)} training questions have a relevant answer among their BM25 candidates; "
            f"at least {MIN_QUESTIONS} are needed to learn a reranker, so this version ranks by BM25."
        )
        result.details["seconds"] = round(time.perf_counter() - started, 3)
        return result

    # Questions without a relevant candidate are held out and scored (they count against both orders)
    # but give LambdaMART nothing to learn from, so training folds use only learnable ones.
    folds = _folds(len(examples), min(CV_FOLDS, len(examples)))
    exponential = collection.gain_scheme == GainScheme.EXPONENTIAL
    grid_scores = []
    best: tuple[float, int, np.ndarray] | None = None
    for setting, params in enumerate(PARAM_GRID):
        progress("cross-validate", setting / len(PARAM_GRID))
        per_question = np.full(len(examples), np.nan)
        for held_out in folds:
            held = set(held_out.tolist())
            train_set = [e for i, e in enumerate(examples) if i not in held and e.targets.max(initial=0) > 0]
            booster = _fit(train_set, params, exponential=exponential, k=collection.ndcg_k)
            held_examples = [examples[i] for i in held_out]
            per_question[held_out] = _ndcg(
                [_reranked(booster, e) for e in held_examples], held_examples, collection=collection
            )
        score = _mean(per_question)
        grid_scores.append({**params, "cv_ndcg": score})
        if score is not None and (best is None or score > best[0]):
            best = (score, setting, per_question)
    result.details["grid"] = grid_scores
    if best is None:
        result.details["reason"] = "No training question has a known relevant answer."
        return result
    best_score, setting, per_question = best
    params = PARAM_GRID[setting]
    comparison = compare_runs(per_question, bm25_all, n_resamples=2000, n_permutations=2000, seed=SEED)
    result.details["cv_comparison"] = {
        "difference": round(comparison.difference, 6),
        "ci_low": round(comparison.ci_low, 6),
        "ci_high": round(comparison.ci_high, 6),
        "p_value": round(comparison.p_value, 6),
        "questions": comparison.n,
    }
    progress("fit", 0.0)
    booster = _fit(learnable, params, exponential=exponential, k=collection.ndcg_k)
    gains = booster.feature_importance(importance_type="gain")
    total = float(gains.sum()) or 1.0
    result.feature_importances = {
        name: round(float(g) / total, 6) for name, g in zip(FEATURE_NAMES, gains, strict=True)
    }
    result.params = dict(params)
    result.model_text = booster.model_to_string()
    result.cv_ndcg_model = best_score
    result.uses_model = best_score >= (result.cv_ndcg_bm25 or 0.0) + MIN_CV_GAIN
    result.method = "lambdamart" if result.uses_model else "bm25"
    if not result.uses_model:
        result.details["reason"] = (
            f"The model's cross-validated NDCG@{collection.ndcg_k} ({best_score:.4f}) did not beat BM25's "
            f"({result.cv_ndcg_bm25:.4f}) by at least {MIN_CV_GAIN}, so this version keeps BM25's order."
        )
    result.details["seconds"] = round(time.perf_counter() - started, 3)
    return result
