"""How sure are we? The dashboard's two questions and the pairs that decide them (selectors: reads only).

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

Both versions rank the test questions as their latest successful evaluation recorded; a version never
evaluated (a challenger the training loop did not promote) ranks them now through its backend, cached
per version and collection state. The relevance model learns from the test questions' labels.
"""

from __future__ import annotations

import hashlib
import logging
import math
from dataclasses import dataclass

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max

from corpus.models import Answer, Collection, Question
from corpus.selectors import test_questions
from evaluation.models import EvaluationRun, QuestionResult
from evaluation.numbers import NO_VALUE, figure, figure_range, signed
from evaluation.numbers import probability as probability_text
from evaluation.uncertainty import (
    SETTLED_SHARE,
    VERDICTS,
    JudgingArrays,
    judging_arrays,
    mean_bounds,
    ndcg_bounds,
    ndcg_for_labels,
    pair_values,
    probability_of_improvement,
    ratings_to_settle,
    relevance_probabilities,
    sample_stars,
    verdict_shares,
)
from rankers.backends import RankerError, RankQuery, get_backend
from rankers.models import Ranker, RankerVersion
from rankers.selectors import ranking_version
from ratings.models import Label

logger = logging.getLogger(__name__)

HEADLINE_TARGET = 0.01
VERDICT_DRAWS = 200
COMPARISON_FLOOR = 0.005
RANKINGS_CACHE_SECONDS = 60 * 60
MAX_K = 20


# --- which versions -------------------------------------------------------------------------------


@dataclass(frozen=True)
class VersionPair:
    """The champion and the challenger compared (``challenger`` None: only the headline)."""

    champion: RankerVersion
    challenger: RankerVersion | None


def version_pair(
    *, ranker: Ranker, champion_id: object = None, challenger_id: object = None
) -> VersionPair | None:
    """The versions a trainer picked, else the champion and the newest other version (the training
    loop's latest challenger). None when the ranker has no version. Ids of another ranker are ignored."""
    versions = {v.pk: v for v in RankerVersion.objects.filter(ranker=ranker)}
    if not versions:
        return None

    def pick(value: object) -> RankerVersion | None:
        text = str(value or "")
        return versions.get(int(text)) if text.isdigit() else None

    champion = pick(champion_id) or ranking_version(ranker=ranker)
    if champion is None:
        return None
    challenger = pick(challenger_id)
    if challenger is None and challenger_id in (None, ""):
        others = [v for v in versions.values() if v.pk != champion.pk]
        challenger = max(others, key=lambda v: (v.created_at, v.pk)) if others else None
    if challenger is not None and challenger.pk == champion.pk:
        challenger = None
    return VersionPair(champion, challenger)


def version_text(version: RankerVersion) -> str:
    return f"version {version.label}"


# --- rankings -------------------------------------------------------------------------------------


def _k(collection: Collection) -> int:
    return max(1, min(collection.ndcg_k, MAX_K))


def _state_key(collection: Collection, version: RankerVersion) -> str:
    answers = Answer.objects.filter(collection=collection).aggregate(n=Count("id"), t=Max("updated_at"))
    questions = Question.objects.filter(collection=collection).aggregate(n=Count("id"), t=Max("updated_at"))
    state = f"{collection.pk}:{version.pk}:{collection.ndcg_k}:{answers}:{questions}"
    return "certainty:rankings:" + hashlib.sha256(state.encode()).hexdigest()


class RankingsUnavailable(Exception):
    """The version has no run covering the test questions and cannot rank them now."""


def version_rankings(
    *, collection: Collection, version: RankerVersion, question_ids: list[int]
) -> dict[int, list[str]]:
    """{test question id: answer external ids, best first, top k} for the version (see the module doc).

    Raises RankingsUnavailable when the rankings are neither in a run nor to be had from the ranker now:
    figures computed from empty rankings would read as a real 0.000."""
    k = _k(collection)
    run = (
        EvaluationRun.objects.succeeded()
        .filter(ranker_version=version)
        .order_by("-finished_at", "-id")
        .first()
    )
    result: dict[int, list[str]] = {}
    if run is not None:
        for q, ranked in QuestionResult.objects.filter(run=run, question_id__in=question_ids).values_list(
            "question_id", "ranked_answer_ids"
        ):
            result[q] = list(ranked or [])[:k]
        if all(q in result for q in question_ids):
            return result
    key = _state_key(collection, version)
    cached = cache.get(key)
    if cached is None:
        cached = {}
        try:
            backend = get_backend(version.ranker, version)
            for q, external_id, text in Question.objects.filter(pk__in=question_ids).values_list(
                "id", "external_id", "text"
            ):
                cached[q] = backend.rank(RankQuery(external_id=external_id, text=text), k).ids[:k]
            cache.set(key, cached, RANKINGS_CACHE_SECONDS)
        except (RankerError, OSError, ValueError) as exc:
            logger.warning("version %s cannot rank the test questions now", version.pk, exc_info=True)
            raise RankingsUnavailable(str(exc)) from exc
    for q in question_ids:
        result.setdefault(q, cached.get(q, []))
    return result


# --- the arrays -----------------------------------------------------------------------------------


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
    k = _k(collection)
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


def _state_for(collection: Collection, pair: VersionPair) -> JudgingState:
    question_ids = list(test_questions(collection=collection).values_list("id", flat=True))
    versions = [pair.champion] + ([pair.challenger] if pair.challenger else [])
    rankings = [
        version_rankings(collection=collection, version=v, question_ids=question_ids) for v in versions
    ]
    return judging_state(collection=collection, rankings=rankings)


# --- the two questions ----------------------------------------------------------------------------


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


@dataclass(frozen=True)
class Certainty:
    headline: HeadlineCertainty | None
    comparison: ComparisonCertainty | None
    # Set when a version could not rank the test questions: no figures then, and this says why.
    unavailable: str = ""


def certainty(*, collection: Collection, pair: VersionPair) -> Certainty:
    """Both answers for the pair of versions (the headline is the champion's)."""
    try:
        state = _state_for(collection, pair)
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


# --- the pairs that decide ------------------------------------------------------------------------


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
        state = _state_for(collection, pair)
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
    k = _k(collection)
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


# --- as the dashboard shows it --------------------------------------------------------------------


def settle_text(n: int) -> str:
    """ "About N more ratings would settle this" (or that none would)."""
    if n == 0:
        return "More ratings would not change this much: it is settled as far as ratings go."
    return f"About {n:,} more rating{'s' if n != 1 else ''} would settle this."


def verdict_text(*, verdict: str, shares: tuple[float, ...]) -> str:
    """ "Real improvement, settled" or "Not settled yet: real improvement in 62%, within noise in 38%"."""
    if verdict:
        return f"{verdict.capitalize()}, settled"
    parts = [
        f"{name} in {probability_text(share)}"
        for name, share in sorted(zip(VERDICTS, shares, strict=True), key=lambda v: -v[1])
        if share > 0
    ]
    return "Not settled yet: " + ", ".join(parts)


def comparison_json(c: ComparisonCertainty) -> dict:
    """The figures a decision keeps (``RankerVersion.comparison["predicted"]``); NaN becomes None, which
    PostgreSQL's jsonb cannot hold otherwise."""

    def finite(value: float) -> float | None:
        return None if math.isnan(value) else float(value)

    return {
        "probability": finite(c.probability),
        "expected_difference": finite(c.expected_difference),
        "verdict": c.verdict,
        "verdict_shares": [float(share) for share in c.verdict_shares],
        "ratings_to_settle": c.ratings_to_settle,
    }


@dataclass(frozen=True)
class Panel:
    """The dashboard's two answers with the versions a trainer may pick and the link to rate."""

    certainty: Certainty
    pair: VersionPair
    versions: list[RankerVersion]

    @property
    def headline_range(self) -> str:
        h = self.certainty.headline
        if h is None or math.isnan(h.low):
            return NO_VALUE
        return figure_range(h.low, h.high)

    @property
    def headline_estimate(self) -> str:
        h = self.certainty.headline
        return NO_VALUE if h is None else figure(h.estimate)

    @property
    def headline_settle(self) -> str:
        return settle_text(self.certainty.headline.ratings_to_settle) if self.certainty.headline else ""

    @property
    def probability(self) -> str:
        c = self.certainty.comparison
        return probability_text(c.probability) if c else NO_VALUE

    @property
    def expected_difference(self) -> str:
        c = self.certainty.comparison
        return signed(c.expected_difference) if c else NO_VALUE

    @property
    def comparison_settle(self) -> str:
        return settle_text(self.certainty.comparison.ratings_to_settle) if self.certainty.comparison else ""

    @property
    def verdict(self) -> str:
        """ "Real improvement, settled" or "Not settled yet: real improvement in 62%, within noise in 38%"."""
        c = self.certainty.comparison
        return verdict_text(verdict=c.verdict, shares=c.verdict_shares) if c else ""

    @property
    def settled_share(self) -> str:
        return probability_text(SETTLED_SHARE)

    @property
    def verdict_draws(self) -> int:
        return VERDICT_DRAWS

    @property
    def rate_query(self) -> str:
        """The rating page's query that starts rating exactly the pairs that decide this."""
        query = f"mode=decide&champion={self.pair.champion.pk}"
        challenger = self.pair.challenger.pk if self.pair.challenger else self.pair.champion.pk
        return f"{query}&challenger={challenger}"


def panel(
    *, collection: Collection, ranker: Ranker, champion_id: object = None, challenger_id: object = None
) -> Panel | None:
    """The dashboard panel for the ranker (None without versions or test questions)."""
    pair = version_pair(ranker=ranker, champion_id=champion_id, challenger_id=challenger_id)
    if pair is None:
        return None
    result = certainty(collection=collection, pair=pair)
    if result.headline is None and not result.unavailable:
        return None
    versions = list(RankerVersion.objects.filter(ranker=ranker).order_by("-created_at", "-id"))
    return Panel(result, pair, versions)
