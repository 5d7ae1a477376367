"""Training: cross-validate the candidates, choose one under the guard, and fit it."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from corpus.models import Collection, Split
from rankers.embedding import EmbeddingUnavailable
from rankers.features import FEATURE_NAMES, FEATURE_VERSION
from rankers.fusion import UNTRAINED_FUSION_WEIGHTS
from rankers.index import CollectionIndex
from rankers.semantic import CandidateVectors, answer_texts, embeddings_build_now, question_vectors
from rankers.signals import RatedQuestions
from ratings.models import Rating
from ratings.selectors import imports_judging

from .candidates import (
    LAMBDAMART_PARAMS,
    LEARNED_SIGNALS,
    _Candidate,
    _FirstStageOrder,
    _Fusion,
    _LambdaMart,
    _LearnedFusion,
    _ndcg,
)
from .cross_validation import _cross_validate, _figures, _mean
from .examples import QuestionExample, VectorsOf, _learnable, rated_questions, training_examples
from .stages import BM25_STAGE, FirstStage

MIN_QUESTIONS = 10
MIN_CV_GAIN = 0.005
EXTRA_LAMBDAMART = ("cosine", "rm3", "propagation")

Progress = Callable[[str, float], None]


def _no_progress(phase: str, fraction: float) -> None:
    pass


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
    rated: RatedQuestions | None = None  # what a propagation-using version ranks with


def rated_per_question(examples: list[QuestionExample], *, k: int) -> dict[str, Any]:
    """How many rated answers the training questions have, against the k places NDCG@k scores: what the
    Rankers page derives "rate more answers per question, this many" from (``trainer.training_explanation``).

    ``under_k``: questions with fewer than k rated answers; ``to_k``: ratings that would bring each of them
    to k (an exact count, not an estimate from the mean).
    """
    counts = [len(e.labels) for e in examples]
    return {
        "k": k,
        "mean": round(sum(counts) / len(counts), 4) if counts else None,
        "under_k": sum(1 for n in counts if n < k),
        "to_k": sum(max(0, k - n) for n in counts),
    }


def _unlisted_incorrect(collection: Collection, examples: list[QuestionExample]) -> list[dict[str, Any]]:
    """The imports whose option made training questions complete (named by the training's explanation),
    as they were when the training read them: [{"id", "name", "questions"}]."""
    complete = [e.question_id for e in examples if e.complete]
    if not complete:
        return []
    return [
        {"id": record.pk, "name": record.name, "questions": n}
        for record, n in imports_judging(
            collection=collection, question_ids=complete, unlisted_incorrect=True
        )
    ]


def choose(scores: dict[str, float], *, untrained: tuple[str, ...], first: str) -> tuple[str, str, str]:
    """The candidate a training keeps, from the CV NDCG of each (``scores``, listed simplest first): the
    chosen one, the best untrained and the best trained.

    - best untrained: the highest among ``untrained``; among equals, the first stage (the simplest);
    - best trained: the simplest trained candidate, replaced by a later one only when it leads by at least
      ``MIN_CV_GAIN`` (a lead below it is noise: bench_loop, covidfaq's first training, LambdaMART led the
      learned fusion by 0.002 in CV, 0.9163 against 0.9141, both were 0.7316 on the training questions'
      complete judgments, and LambdaMART's version was 0.018 below on the test questions, 0.6925, 0.7103);
    - chosen: the best trained when it beats the best untrained by at least ``MIN_CV_GAIN``, else the
      best untrained (the guard: a version never loses, in CV, to what needed no ratings).
    """
    best_untrained = max((n for n in scores if n in untrained), key=lambda n: (scores[n], n == first))
    trained = [n for n in scores if n not in untrained]
    best_trained = trained[0]
    for name in trained[1:]:
        if scores[name] >= scores[best_trained] + MIN_CV_GAIN:
            best_trained = name
    chosen = best_trained if scores[best_trained] >= scores[best_untrained] + MIN_CV_GAIN else best_untrained
    return chosen, best_untrained, best_trained


def train(
    *,
    collection: Collection,
    index: CollectionIndex,
    candidates: int,
    progress: Progress = _no_progress,
    first_stage: FirstStage = BM25_STAGE,
) -> TrainingResult:
    """Cross-validate the candidates on the current training labels, choose one, and fit it.

    ``first_stage``: where candidates come from (BM25, or an engine ranker's engine). ``progress(phase,
    fraction)`` hears of each phase (collect-labels, compute-features, cross-validate, fit) as it goes.
    An engine that fails raises its RankerError / RankerUnavailable.
    """
    started = time.perf_counter()
    first = first_stage.name
    progress("collect-labels", 0.0)
    notices: list[str] = []
    progress("compute-features", 0.0)
    vectors_of: VectorsOf | None = None
    try:
        if first_stage.backend is None:
            full = embeddings_build_now(
                collection=collection, index=index, progress=lambda f: progress("compute-features", 0.8 * f)
            )
            vectors_of = lambda positions: np.asarray(full[positions])  # noqa: E731
        else:
            # Only the answers the engine returns are encoded (cached by text hash), never the whole index.
            vectors_of = CandidateVectors(index=index, texts=answer_texts(index=index)).of
        question_vectors(["warm up"])  # the model loads here rather than in the middle of the examples
    except EmbeddingUnavailable as exc:
        vectors_of = None
        notices.append(f"Semantic model unavailable ({exc}); this version uses lexical signals only.")
    semantic = vectors_of is not None
    try:
        examples = training_examples(
            collection=collection,
            index=index,
            candidates=candidates,
            first_stage=first_stage,
            vectors_of=vectors_of,
        )
    except EmbeddingUnavailable as exc:
        notices.append(f"Semantic model unavailable ({exc}); this version uses lexical signals only.")
        semantic = False
        examples = training_examples(
            collection=collection, index=index, candidates=candidates, first_stage=first_stage
        )
    progress("compute-features", 1.0)
    label_count = sum(len(e.labels) for e in examples)
    learnable = [e for e in examples if _learnable(e)]
    result = TrainingResult(uses_model=False, label_count=label_count, question_count=len(examples))
    result.method = first
    first_all = _ndcg([e.candidate_ids for e in examples], examples, collection=collection)
    result.details = {
        "first_stage": first,
        "candidates_depth": candidates,
        "training_questions": len(examples),
        "learnable_questions": len(learnable),
        # Questions an import judged with "answers not listed are incorrect" on: their unlisted candidates
        # are 0 stars (examples.complete); and those imports, each with how many of them it judged.
        "complete_questions": sum(e.complete for e in examples),
        "unlisted_incorrect": _unlisted_incorrect(collection, examples),
        "feature_version": FEATURE_VERSION,
        "min_cv_gain": MIN_CV_GAIN,
        "semantic": semantic,
        # People (and import accounts) whose ratings of training questions made these labels.
        "raters": Rating.objects.filter(question__collection=collection, question__split=Split.TRAIN)
        .values("rater_id")
        .distinct()
        .count(),
        "rated_per_question": rated_per_question(examples, k=collection.ndcg_k),
    }
    if notices:
        result.details["message"] = " ".join(notices)
    title = first_stage.title
    if len(learnable) < MIN_QUESTIONS:
        result.cv_ndcg_bm25 = _mean(first_all)
        result.details["reason"] = (
            f"Only {len(learnable)} training questions have a relevant answer among {first_stage.pool}; at "
            f"least {MIN_QUESTIONS} are needed to choose by cross-validation, so this version ranks as "
            f"{title} does."
        )
        result.details["seconds"] = round(time.perf_counter() - started, 3)
        return result

    own = first_stage.signals
    extra = (*own, *EXTRA_LAMBDAMART) if semantic else (*own, "rm3")
    learned = (*own, *LEARNED_SIGNALS)
    untrained = (first, "fusion")
    makers: dict[str, Callable[[], _Candidate]] = {first: lambda: _FirstStageOrder(first)}
    if semantic:
        makers["fusion"] = lambda: _Fusion(first)
        makers["learned-fusion"] = lambda: _LearnedFusion(collection.ndcg_k, learned)
    makers["lambdamart"] = lambda: _LambdaMart(collection, extra)
    per_question: dict[str, np.ndarray] = {}
    scores: dict[str, float] = {}
    table: list[dict[str, Any]] = []
    for step, (name, make) in enumerate(makers.items()):
        progress("cross-validate", step / len(makers))
        values, means, share = _cross_validate(
            make, examples, index, collection=collection, semantic=semantic
        )
        per_question[name] = values
        mean = _mean(values)
        scores[name] = mean if mean is not None else -1.0
        table.append(
            {
                "name": name,
                "trained": name not in untrained,
                "cv_ndcg": mean,
                "spread": round(max(means) - min(means), 6) if means else None,
                "per_assignment": [round(m, 6) for m in means],
                "rated_share": round(share, 4),
            }
        )
    chosen, best_untrained, best_trained = choose(scores, untrained=untrained, first=first)
    for row in table:
        row["chosen"] = row["name"] == chosen
    result.details["candidates"] = table
    # Whether some figure rests on judged-only NDCG (a question of ratings through the queue); False when every
    # training question is an imported ground truth, scored with its unlisted answers at 0 stars.
    result.details["cv_judged_only"] = any(not e.complete for e in examples)
    result.details["cv_rated_share"] = next(row["rated_share"] for row in table if row["name"] == chosen)
    # What this version adds over its first stage alone (BM25, or the engine as it is).
    result.details["cv_vs_first_stage"] = _figures(per_question[chosen], per_question[first])
    if semantic:
        # What the ratings added: the best candidate that learned from them against the untrained fusion.
        result.details["ratings_added"] = {
            "candidate": best_trained,
            "over": "fusion",
            **_figures(per_question[best_trained], per_question["fusion"]),
        }
    result.cv_ndcg_bm25 = scores[first]
    result.cv_ndcg_model = scores[chosen]
    result.method = chosen
    if chosen != first and chosen == best_untrained:
        result.details["reason"] = (
            f"The best candidate that learned from ratings ({best_trained}, CV NDCG@{collection.ndcg_k} "
            f"{scores[best_trained]:.4f}) did not beat {chosen} ({scores[chosen]:.4f}), which needs no "
            f"ratings, by at least {MIN_CV_GAIN}."
        )
    elif chosen == first:
        result.details["reason"] = f"No candidate beat {title} in cross-validation by at least {MIN_CV_GAIN}."

    progress("fit", 0.0)
    rated = rated_questions(examples, index) if semantic else None
    if chosen == "learned-fusion":
        fusion = _LearnedFusion(collection.ndcg_k, learned)
        fusion.fit(examples, rated)
        assert fusion.model is not None
        result.params = {"signals": list(learned), "weights": list(fusion.model.weights)}
        result.feature_importances = {
            name: round(abs(w), 6) for name, w in zip(learned, fusion.model.weights, strict=True)
        }
        result.rated = rated
        result.uses_model = True
    elif chosen == "fusion":
        result.params = {"signals": [first, "cosine"], "weights": list(UNTRAINED_FUSION_WEIGHTS)}
        result.feature_importances = {first: 0.5, "cosine": 0.5}
        result.uses_model = True
    elif chosen == "lambdamart":
        model = _LambdaMart(collection, extra)
        model.fit(examples, rated)
        assert model.booster is not None
        names = list(FEATURE_NAMES) + list(extra)
        gains = model.booster.feature_importance(importance_type="gain")
        total = float(gains.sum()) or 1.0
        result.feature_importances = {
            n: round(float(g) / total, 6) for n, g in zip(names, gains, strict=True)
        }
        result.params = {**LAMBDAMART_PARAMS, "signals": list(extra)}
        result.model_text = model.booster.model_to_string()
        result.rated = rated if "propagation" in extra else None
        result.uses_model = True
    result.details["seconds"] = round(time.perf_counter() - started, 3)
    return result
