"""The pairs that decide, for the rating queue: unrated test pairs by how much a rating of each would
settle the comparison (or the headline), and unrated training pairs by how unsure the ranker is of their
stars."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from corpus.models import Collection
from evaluation.uncertainty import judging_arrays, pair_values, relevance_probabilities
from ratings.models import Label

from .rankings import RankingsUnavailable, certainty_k
from .state import state_for
from .versions import VersionPair


@dataclass(frozen=True)
class DecidingPair:
    question_id: int
    answer_id: int
    value: float


def deciding_pairs(*, collection: Collection, pair: VersionPair) -> list[DecidingPair]:
    """Unrated test pairs by the expected reduction of the doubt a rating brings, largest first: on the
    difference between challenger and champion when there is a challenger, else on the champion's
    headline. Pairs with no effect are left out (and all of them when a version cannot rank now)."""
    try:
        state = state_for(collection, pair)
    except RankingsUnavailable:
        return []
    if state.n_questions == 0:
        return []
    values = pair_values(state.arrays, state.probs, challenger=None if pair.challenger is None else 1)
    order = np.argsort(-values, kind="stable")
    return [
        DecidingPair(state.pairs[i][0], state.pairs[i][1], float(values[i])) for i in order if values[i] > 0
    ]


def unsure_training_pairs(
    *, collection: Collection, candidates: dict[int, list[int]], question_ids: list[int]
) -> list[DecidingPair]:
    """Unrated pairs of training questions in the ranker's top k, by how unsure we are of their stars:
    ``Var(stars)`` under the relevance model fitted on the training labels (:mod:`.uncertainty.relevance`),
    largest first, so the questions whose answers the ranker is least sure of come first."""
    k = certainty_k(collection)
    labels = {
        (q, a): gain
        for q, a, gain in Label.objects.filter(question_id__in=question_ids).values_list(
            "question_id", "answer_id", "gain"
        )
    }
    pairs: list[tuple[int, int]] = []
    pair_question: list[int] = []
    runs = np.full((1, len(question_ids), k), -1, dtype=np.int64)
    index: dict[tuple[int, int], int] = {}
    labelled: dict[int, list[tuple[int, int]]] = {}
    for key in labels:
        labelled.setdefault(key[0], []).append(key)
    for qi, q in enumerate(question_ids):
        for key in labelled.get(q, []) + [(q, a) for a in candidates.get(q, [])[:k]]:
            if key not in index:
                index[key] = len(pairs)
                pairs.append(key)
                pair_question.append(qi)
        for rank, a in enumerate(candidates.get(q, [])[:k]):
            runs[0, qi, rank] = index[(q, a)]
    if not pairs:
        return []
    arrays = judging_arrays(
        pair_question=np.array(pair_question, dtype=np.int64),
        labels=np.array([float(labels[p]) if p in labels else math.nan for p in pairs]),
        run_pairs=runs,
        k=k,
    )
    probs = relevance_probabilities(arrays)
    stars = np.arange(4.0)
    variance = probs @ stars**2 - (probs @ stars) ** 2
    variance = np.where(arrays.unknown, variance, 0.0)
    order = np.argsort(-variance, kind="stable")
    return [DecidingPair(pairs[i][0], pairs[i][1], float(variance[i])) for i in order if variance[i] > 0]
