"""Ranking metrics engine: pure numpy, no Django.

* :mod:`.ranking` – per-question DCG / NDCG / accuracy / precision / recall / RR / judged at k,
  vectorised over many questions, plus :func:`evaluate_rankings` for ragged Python input. DCG, NDCG@k,
  gains and discounts are defined once in :mod:`rankers.ndcg` (the learners use them too) and
  re-exported here.
* :mod:`.judged` – judged-only NDCG@k (``trec_eval -J``): unrated answers removed before NDCG;
  :func:`judged_ndcg_at_k` takes scores and labels (NaN: unrated) as arrays, for learners.
* :mod:`.stats` – bootstrap confidence intervals and the paired randomization test.
* :mod:`.trec` – TREC qrels/run parsing and trec_eval 10 compatible scoring (``manage.py score``), a
  package: files, measure formulas and output format each in their own module.
"""

from .judged import condensed, judged_ndcg_at_k
from .ranking import (
    LabelArrays,
    MeanResult,
    RankingEvaluation,
    dcg_at_k,
    discount_divisors,
    evaluate_rankings,
    gains,
    ideal_dcg_at_k,
    judged_at_k,
    label_arrays,
    mean_ignoring_undefined,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
    success_at_k,
)
from .stats import (
    ConfidenceInterval,
    PairedComparison,
    bootstrap_ci,
    compare_runs,
    paired_randomization_test,
    verdict,
)

__all__ = [
    "ConfidenceInterval",
    "LabelArrays",
    "MeanResult",
    "PairedComparison",
    "RankingEvaluation",
    "bootstrap_ci",
    "compare_runs",
    "condensed",
    "dcg_at_k",
    "discount_divisors",
    "evaluate_rankings",
    "gains",
    "ideal_dcg_at_k",
    "judged_at_k",
    "judged_ndcg_at_k",
    "label_arrays",
    "mean_ignoring_undefined",
    "ndcg_at_k",
    "paired_randomization_test",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank_at_k",
    "success_at_k",
    "verdict",
]
