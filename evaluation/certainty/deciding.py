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
from .versions import VersionPair, version_text


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


def why_nothing_decides(*, collection: Collection, pair: VersionPair) -> str:
    """Why ``deciding_pairs`` finds no pair for these versions, in a plain sentence (for the API's queue,
    which then offers what the rating page would). Reads the same state, so it says what that saw."""
    what = (
        f"whether {version_text(pair.challenger)} is better than {version_text(pair.champion)}"
        if pair.challenger is not None
        else f"how sure we are of {version_text(pair.champion)}'s score"
    )
    try:
        state = state_for(collection, pair)
    except RankingsUnavailable as exc:
        return (
            f"The versions compared cannot rank the test questions now ({exc}), so no rating decides {what}."
        )
    if state.n_questions == 0:
        return f"The collection has no test questions, so no rating decides {what}."
    runs = state.arrays.run_pairs
    if pair.challenger is not None and np.array_equal(runs[0], runs[1]):
        return (
            f"{version_text(pair.challenger).capitalize()} and {version_text(pair.champion)} put the same "
            f"answers in the same order for every test question, so no rating can change which is better."
        )
    return (
        f"Every answer in the test questions' top {certainty_k(collection)} that could change {what} is "
        "rated already."
    )


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
