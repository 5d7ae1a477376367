"""A run's metric definition applied to rankings: the per-question figures (the metrics engine), the
same for a run's own results, a comparison of versions and the pages that re-score stored rankings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from evaluation.metrics.ranking import Discount, Gain, RankingEvaluation, evaluate_rankings
from evaluation.models import EvaluationRun


def rated_top(ranking: Sequence[str], labels: dict[str, int], k: int) -> list[str]:
    """The ranking's top k condensed to its rated answers (NDCG@k on rated answers scores this list)."""
    return [a for a in ranking[:k] if a in labels]


def rated_share(rankings: Sequence[Sequence[str]], labels: Sequence[dict[str, int]], k: int) -> float:
    """The share of the rankings' top-k places holding a rated answer, over all of them (judged@k, as
    evaluation runs store it as ``judged_mean``); NaN for no ranking. Shown beside NDCG@k on rated
    answers: how much of what a comparison ranked is known."""
    if not rankings:
        return float("nan")
    rated = sum(len(rated_top(r, known, k)) for r, known in zip(rankings, labels, strict=True))
    return rated / (k * len(rankings))


def score_rankings(
    *,
    run: EvaluationRun,
    rankings: Sequence[Sequence[str]],
    labels: Sequence[dict[str, int]],
    rated_only: bool = False,
) -> RankingEvaluation:
    """Per-question metrics of the rankings under the run's metric definition (the metrics engine).

    ``rated_only``: NDCG@k on rated answers (``evaluation.measures.NDCG_RATED``, the measure of every
    comparison of two rankings): each ranking's top k is first condensed to the answers ``labels`` knows,
    which move up into the places the unrated ones leave (``trec_eval -J`` on the top k). Cutting at k
    first keeps the figure independent of how deep a ranking goes (a gate ranks 10 deep, an export 50).
    Otherwise an unrated answer counts as 0 stars (the headline's NDCG@k, ``trec_eval``'s ndcg_cut)."""
    if rated_only:
        rankings = [rated_top(r, known, run.ndcg_k) for r, known in zip(rankings, labels, strict=True)]
    return evaluate_rankings(
        [list(r) for r in rankings],
        list(labels),
        k=run.ndcg_k,
        accuracy_k=run.accuracy_k,
        threshold=run.relevance_threshold,
        gain=cast(Gain, run.gain_scheme),
        discount=cast(Discount, run.discount),
    )
