"""A run's metric definition applied to rankings: the per-question figures (the metrics engine), the
same for a run's own results, a comparison of versions and the pages that re-score stored rankings.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from evaluation.metrics.ranking import Discount, Gain, RankingEvaluation, evaluate_rankings
from evaluation.models import EvaluationRun


def score_rankings(
    *, run: EvaluationRun, rankings: Sequence[Sequence[str]], labels: Sequence[dict[str, int]]
) -> RankingEvaluation:
    """Per-question metrics of the rankings under the run's metric definition (the metrics engine)."""
    return evaluate_rankings(
        [list(r) for r in rankings],
        list(labels),
        k=run.ndcg_k,
        accuracy_k=run.accuracy_k,
        threshold=run.relevance_threshold,
        gain=cast(Gain, run.gain_scheme),
        discount=cast(Discount, run.discount),
    )
