"""The estimators' arrays for a collection's test questions: their labelled pairs plus each version's
top k (unrated: NaN), with the predicted relevance of every pair. The relevance model learns from the test
questions' labels."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from corpus.models import Answer, Collection
from corpus.selectors import test_questions
from evaluation.uncertainty import JudgingArrays, judging_arrays, relevance_probabilities
from ratings.models import Label

from .rankings import certainty_k, version_rankings
from .versions import VersionPair


@dataclass(frozen=True)
class JudgingState:
    """The estimators' arrays for the test questions, and which (question, answer) each pair is."""

    arrays: JudgingArrays
    pairs: list[tuple[int, int]]
    probs: np.ndarray

    @property
    def n_questions(self) -> int:
        return self.arrays.n_questions


def judging_state(*, collection: Collection, rankings: list[dict[int, list[str]]]) -> JudgingState:
    """Arrays for every test question: its labelled pairs plus each ranking's top k (unrated: NaN)."""
    k = certainty_k(collection)
    question_ids = list(test_questions(collection=collection).order_by("id").values_list("id", flat=True))
    ids_by_external = dict(Answer.objects.filter(collection=collection).values_list("external_id", "id"))
    labels: dict[tuple[int, int], int] = {
        (q, a): gain
        for q, a, gain in Label.objects.filter(question_id__in=question_ids).values_list(
            "question_id", "answer_id", "gain"
        )
    }
    index: dict[tuple[int, int], int] = {}
    pairs: list[tuple[int, int]] = []
    pair_question: list[int] = []
    pair_labels: list[float] = []

    def add(qi: int, key: tuple[int, int]) -> int:
        if key not in index:
            index[key] = len(pairs)
            pairs.append(key)
            pair_question.append(qi)
            pair_labels.append(float(labels[key]) if key in labels else math.nan)
        return index[key]

    runs = np.full((len(rankings), len(question_ids), k), -1, dtype=np.int64)
    position = {q: i for i, q in enumerate(question_ids)}
    for q, a in labels:
        add(position[q], (q, a))
    for r, ranking in enumerate(rankings):
        for qi, q in enumerate(question_ids):
            known = [ids_by_external[e] for e in ranking.get(q, []) if e in ids_by_external]
            for rank, a in enumerate(known[:k]):
                runs[r, qi, rank] = add(qi, (q, a))
    arrays = judging_arrays(
        pair_question=np.array(pair_question, dtype=np.int64),
        labels=np.array(pair_labels, dtype=np.float64),
        run_pairs=runs,
        k=k,
        gain=collection.gain_scheme,  # type: ignore[arg-type]
        discount=collection.discount,  # type: ignore[arg-type]
    )
    return JudgingState(arrays, pairs, relevance_probabilities(arrays))


def state_for(collection: Collection, pair: VersionPair) -> JudgingState:
    question_ids = list(test_questions(collection=collection).values_list("id", flat=True))
    versions = [pair.champion] + ([pair.challenger] if pair.challenger else [])
    rankings = [
        version_rankings(collection=collection, version=v, question_ids=question_ids) for v in versions
    ]
    return judging_state(collection=collection, rankings=rankings)
