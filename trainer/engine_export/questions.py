"""The questions an export is fitted and measured on (their labels and the engine's candidates with
feature values) and NDCG@k on rated answers over them, the measure of every figure of the export."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

import numpy as np

from corpus.models import Collection, GainScheme, Question
from evaluation.metrics.ranking import Discount, Gain, label_arrays, mean_ignoring_undefined, ndcg_at_k
from evaluation.services import rated_top
from rankers.export.fetch import Candidates, EngineFeatures
from rankers.semantic import question_vectors
from ratings.selectors import labels_for_collection


@dataclass
class _Question:
    external_id: str
    text: str
    labels: dict[str, int]
    candidates: Candidates
    vector: np.ndarray | None = None  # the question's, when the export has the vector feature
    # An import with "answers not listed are incorrect" on judges the question: a candidate it does not list
    # is 0 stars (as the learner reads it, ``trainer.learner.examples``); elsewhere an unrated one is unknown.
    complete: bool = False


def _labelled(collection: Collection, split: str) -> list[tuple[Question, dict[str, int]]]:
    """The split's questions that have labels, in id order, with {answer external id: stars}."""
    labels: dict[int, dict[str, int]] = {}
    rows = labels_for_collection(collection=collection, split=split).values_list(
        "question_id", "answer__external_id", "gain"
    )
    for question_id, answer_id, gain in rows:
        labels.setdefault(question_id, {})[answer_id] = gain
    questions = Question.objects.filter(collection=collection, id__in=list(labels)).order_by("id")
    return [(q, labels[q.pk]) for q in questions]


def _fetch(
    fetcher: EngineFeatures,
    pairs: list[tuple[Question, dict[str, int]]],
    window: int,
    report: Callable[[float], None],
    complete: set[int] | None = None,
    vectors: bool = False,
) -> list[_Question]:
    out = []
    for i, (question, labels) in enumerate(pairs):
        vector = question_vectors([question.text])[0] if vectors else None
        out.append(
            _Question(
                question.external_id,
                question.text,
                labels,
                fetcher.candidates(question.text, window, vector),
                vector=vector,
                complete=question.pk in (complete or set()),
            )
        )
        report((i + 1) / max(len(pairs), 1))
    return out


def _gain(stars: np.ndarray, collection: Collection) -> np.ndarray:
    return 2.0**stars - 1.0 if collection.gain_scheme == GainScheme.EXPONENTIAL else stars


def _ndcg(rankings: list[list[str]], labels: list[dict[str, int]], collection: Collection) -> np.ndarray:
    """NDCG@k on rated answers of each ranking (``evaluation.measures.NDCG_RATED``: its top k condensed to
    its rated answers): these figures compare rankings (the engine alone, the export, the version), so an
    unrated answer is left out rather than counted as 0 stars, as in every comparison of the app."""
    if not rankings:
        return np.zeros(0)
    rated = [rated_top(r, known, collection.ndcg_k) for r, known in zip(rankings, labels, strict=True)]
    arrays = label_arrays(rated, labels)
    return ndcg_at_k(
        arrays.retrieved,
        arrays.ideal,
        collection.ndcg_k,
        gain=cast(Gain, collection.gain_scheme),
        discount=cast(Discount, collection.discount),
    )


def _mean(values: np.ndarray) -> float | None:
    result = mean_ignoring_undefined(values).mean if len(values) else math.nan
    return None if math.isnan(result) else round(float(result), 6)
