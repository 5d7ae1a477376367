"""How sure are we? The dashboard's two questions answered for a pair of versions (reads only).

* **How sure are we of the headline?** The champion's NDCG@k over the test questions, its exact lower
  and upper bounds over the stars its unrated top-k answers may get
  (:mod:`evaluation.uncertainty.bounds`), and the estimate from predicted relevance (the mean over
  draws of the unrated pairs' stars, :mod:`evaluation.uncertainty.improvement`).
* **Is the challenger better?** The probability that the challenger's mean NDCG@k beats the
  champion's, given today's labels, the predicted relevance of the unrated pairs and the choice of test
  questions (:func:`evaluation.uncertainty.probability_of_improvement`).
* **The verdict once every answer is rated** (:func:`evaluation.uncertainty.verdict_shares`): the
  compare page's verdict (paired randomization test, p < 0.05) under ``VERDICT_DRAWS`` draws of the
  unrated pairs' stars; settled when at least 95% of the draws agree.
* **About N more ratings would settle this** (:func:`evaluation.uncertainty.ratings_to_settle`): the
  headline is settled when the doubt due to unrated answers (standard deviation, first-order) is at
  most ``HEADLINE_TARGET`` = 0.01, half the ±0.02 the figure is read to; the comparison when that doubt
  is at most half of the larger of the expected difference and the doubt due to the choice of
  questions, and never asked below 0.005 (more ratings cannot beat the number of test questions).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from corpus.models import Collection
from evaluation.uncertainty import (
    judging_arrays,
    mean_bounds,
    ndcg_bounds,
    ndcg_for_labels,
    pair_values,
    probability_of_improvement,
    rated_ndcg,
    rated_share,
    ratings_to_settle,
    relevance_probabilities,
    sample_stars,
    verdict_shares,
)

from .rankings import RankingsUnavailable
from .state import JudgingState, state_for
from .versions import VersionPair, version_text

HEADLINE_TARGET = 0.01
VERDICT_DRAWS = 200
COMPARISON_FLOOR = 0.005


@dataclass(frozen=True)
class HeadlineCertainty:
    """The champion's NDCG@k: exact bounds, estimate from predicted relevance, ratings to settle it."""

    version: str
    k: int
    low: float
    high: float
    estimate: float
    unrated: int
    ratings_to_settle: int
    questions: int


@dataclass(frozen=True)
class ComparisonCertainty:
    """P(challenger better than champion), the expected difference, ratings to settle it."""

    champion: str
    challenger: str
    champion_id: int
    challenger_id: int
    k: int
    probability: float
    expected_difference: float
    label_sd: float
    question_sd: float
    ratings_to_settle: int
    questions: int
    #: Share of the completions of the unrated labels ending in each verdict (``VERDICTS`` order).
    verdict_shares: tuple[float, float, float] = (0.0, 1.0, 0.0)
    #: The verdict at least 95% of them give, or "" (not settled yet).
    verdict: str = ""
    #: NDCG@k on rated answers (the gate's and the compare page's measure) over the questions both
    #: versions have one on, and each version's share of rated answers in its top k.
    rated_champion: float = math.nan
    rated_challenger: float = math.nan
    rated_share_champion: float = math.nan
    rated_share_challenger: float = math.nan


@dataclass(frozen=True)
class Certainty:
    headline: HeadlineCertainty | None
    comparison: ComparisonCertainty | None
    # Set when a version could not rank the test questions: no figures then, and this says why.
    unavailable: str = ""


def certainty(*, collection: Collection, pair: VersionPair) -> Certainty:
    """Both answers for the pair of versions (the headline is the champion's)."""
    try:
        state = state_for(collection, pair)
    except RankingsUnavailable as exc:
        return Certainty(None, None, unavailable=str(exc) or "the ranker did not answer")
    if state.n_questions == 0:
        return Certainty(None, None)
    k = state.arrays.k
    bounds = mean_bounds(ndcg_bounds(state.arrays, run=0))
    single = state if pair.challenger is None else _single(state)
    draws = probability_of_improvement(single.arrays, single.probs, challenger=0, champion=0)
    head_values = pair_values(single.arrays, single.probs, challenger=None)
    headline = HeadlineCertainty(
        version=version_text(pair.champion),
        k=k,
        low=bounds.low,
        high=bounds.high,
        estimate=min(max(draws.run_means[0], bounds.low), bounds.high)
        if not math.isnan(bounds.low)
        else math.nan,
        unrated=bounds.unknown_in_top_k,
        ratings_to_settle=ratings_to_settle(head_values, HEADLINE_TARGET),
        questions=draws.questions,
    )
    comparison = None
    if pair.challenger is not None:
        result = probability_of_improvement(state.arrays, state.probs, challenger=1, champion=0)
        values = pair_values(state.arrays, state.probs)
        completions = ndcg_for_labels(
            state.arrays,
            sample_stars(state.arrays, state.probs, VERDICT_DRAWS, np.random.default_rng(0)),
        )
        verdicts = verdict_shares(completions[:, 1] - completions[:, 0])
        on_rated = rated_ndcg(state.arrays)
        both = ~np.isnan(on_rated).any(axis=0)
        shares = rated_share(state.arrays)
        target = max(0.5 * max(abs(result.expected_difference), result.question_sd), COMPARISON_FLOOR)
        comparison = ComparisonCertainty(
            champion=version_text(pair.champion),
            challenger=version_text(pair.challenger),
            champion_id=pair.champion.pk,
            challenger_id=pair.challenger.pk,
            k=k,
            probability=result.probability,
            expected_difference=result.expected_difference,
            label_sd=result.label_sd,
            question_sd=result.question_sd,
            ratings_to_settle=ratings_to_settle(values, target) if not math.isnan(target) else 0,
            questions=result.questions,
            verdict_shares=verdicts.shares,
            verdict=verdicts.settled,
            rated_champion=float(on_rated[0, both].mean()) if both.any() else math.nan,
            rated_challenger=float(on_rated[1, both].mean()) if both.any() else math.nan,
            rated_share_champion=float(shares[0]),
            rated_share_challenger=float(shares[1]),
        )
    return Certainty(headline, comparison)


def _single(state: JudgingState) -> JudgingState:
    """The champion's run alone: the headline's own pool (the challenger's answers left out)."""
    arrays = state.arrays
    in_champion = np.zeros(arrays.labels.size, dtype=bool)
    top = arrays.run_pairs[0]
    in_champion[top[top >= 0]] = True
    keep = np.flatnonzero(in_champion | ~arrays.unknown)
    new_index = np.full(arrays.labels.size + 1, -1, dtype=np.int64)
    new_index[keep] = np.arange(keep.size)
    sub = judging_arrays(
        pair_question=arrays.pair_question[keep],
        labels=arrays.labels[keep],
        run_pairs=new_index[arrays.run_pairs[:1]],
        k=arrays.k,
        gain=arrays.gain,
        discount=arrays.discount,
    )
    return JudgingState(sub, [state.pairs[i] for i in keep], relevance_probabilities(sub))
