"""Champion against challenger: two versions of a ranker ranked on every test question now and scored
with today's labels, judged-only (``versions_compare``); nothing is stored.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from corpus.models import Question
from corpus.selectors import test_questions
from evaluation.measures import NDCG_RATED
from evaluation.metrics.stats import compare_runs
from evaluation.models import EvaluationRun
from rankers.backends import get_backend
from rankers.base import RankerError
from rankers.models import RankerVersion
from ratings.selectors import labels_by_question

from .ranking import rank_once
from .scoring import rated_share, score_rankings

SIGNIFICANCE = 0.05


@dataclass(frozen=True)
class VersionComparison:
    """Two versions of one ranker on the same test questions, scored with the same (current) labels.

    ``difference`` is mean NDCG@k(challenger) − mean NDCG@k(champion) over the questions both could be
    scored on (a question without any label has no NDCG and is left out of both). NDCG@k here is
    judged-only (``trec_eval -J``): each ranking is condensed to its rated answers before scoring, so an
    unrated answer is unknown rather than 0 stars and a version trained on the ratings gets no credit
    for merely ranking rated answers first (what the unrated answers could be is the certainty page's
    ``predicted`` figure, kept beside this one). With the percentile
    bootstrap CI of that difference and the paired randomization test's two-sided p-value
    (``evaluation.metrics.stats.compare_runs``). ``verdict``: "better" or "worse" when p < 0.05,
    otherwise "within noise".
    """

    k: int
    questions: int
    challenger_ndcg: float
    champion_ndcg: float
    difference: float
    ci_low: float
    ci_high: float
    p_value: float
    improved: int
    worsened: int
    verdict: str
    #: Each version's share of rated answers in its top k over the test questions (0-1; NaN: none ranked).
    challenger_rated_share: float = math.nan
    champion_rated_share: float = math.nan

    def as_json(self) -> dict[str, Any]:
        """The figures for a JSON field: NaN (no question could be scored) becomes null."""

        def number(value: float) -> float | None:
            return None if math.isnan(value) else round(value, 6)

        return {
            "measure": NDCG_RATED,
            "k": self.k,
            "questions": self.questions,
            "challenger_ndcg": number(self.challenger_ndcg),
            "champion_ndcg": number(self.champion_ndcg),
            "difference": number(self.difference),
            "ci_low": number(self.ci_low),
            "ci_high": number(self.ci_high),
            "p_value": number(self.p_value),
            "improved": self.improved,
            "worsened": self.worsened,
            "verdict": self.verdict,
            "challenger_rated_share": number(self.challenger_rated_share),
            "champion_rated_share": number(self.champion_rated_share),
        }


def _per_question_ndcg(
    *, backend, questions: list[Question], labels: list[dict[str, int]], run: EvaluationRun
) -> tuple[np.ndarray, float]:
    """Each question's NDCG@k on rated answers, and the share of rated answers in the top k overall."""
    outcomes = [rank_once(backend, question, run.ndcg_k) for question in questions]
    failed = [o for o in outcomes if o.ranking is None]
    if failed:
        raise RankerError(
            f"{len(failed)} of {len(outcomes)} test questions could not be ranked: {failed[0].error}"
        )
    rankings = [o.ranking.ids if o.ranking else [] for o in outcomes]
    scored = score_rankings(run=run, rankings=rankings, labels=labels, rated_only=True)
    return np.asarray(scored.ndcg, dtype=float), rated_share(rankings, labels, run.ndcg_k)


def versions_compare(*, challenger: RankerVersion, champion: RankerVersion) -> VersionComparison:
    """Rank every test question with both versions now and score both with today's labels, judged-only.

    Nothing is stored: the training loop keeps the figures on the challenger. Raises RankerError when
    a version cannot rank (e.g. its model file is gone) and ValueError for versions of two rankers.
    """
    if challenger.ranker_id != champion.ranker_id:
        raise ValueError("the two versions belong to different rankers")
    ranker = challenger.ranker
    collection = ranker.collection
    questions = list(test_questions(collection=collection))
    by_question = labels_by_question(question_ids=[q.pk for q in questions])
    labels = [by_question[q.pk] for q in questions]
    # An unsaved run carries the collection's metric definition, exactly as a real run would snapshot it.
    definition = EvaluationRun(
        ndcg_k=collection.ndcg_k,
        gain_scheme=collection.gain_scheme,
        discount=collection.discount,
        relevance_threshold=collection.relevance_threshold,
        accuracy_k=collection.accuracy_k,
    )
    new, new_share = _per_question_ndcg(
        backend=get_backend(ranker, challenger), questions=questions, labels=labels, run=definition
    )
    old, old_share = _per_question_ndcg(
        backend=get_backend(ranker, champion), questions=questions, labels=labels, run=definition
    )
    result = compare_runs(new, old, n_resamples=5000, n_permutations=5000, seed=0)
    both = ~(np.isnan(new) | np.isnan(old))
    significant = not math.isnan(result.p_value) and result.p_value < SIGNIFICANCE
    verdict = "within noise"
    if significant and result.difference > 0:
        verdict = "better"
    elif significant and result.difference < 0:
        verdict = "worse"
    return VersionComparison(
        k=collection.ndcg_k,
        questions=result.n,
        challenger_ndcg=result.mean_a,
        champion_ndcg=result.mean_b,
        difference=result.difference,
        ci_low=result.ci_low,
        ci_high=result.ci_high,
        p_value=result.p_value,
        improved=int(np.sum(new[both] > old[both] + 1e-12)),
        worsened=int(np.sum(new[both] < old[both] - 1e-12)),
        verdict=verdict,
        challenger_rated_share=new_share,
        champion_rated_share=old_share,
    )
