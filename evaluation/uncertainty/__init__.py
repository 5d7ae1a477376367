"""How sure are we? Estimators for NDCG@k when some answers are unlabelled: pure numpy, no Django.

* :mod:`.pairs` – the arrays (pairs, labels, the runs' top k) and NDCG@k for full assignments of stars.
* :mod:`.bounds` – exact lower and upper bounds of NDCG@k and of its mean over the unlabelled stars.
* :mod:`.relevance` – a per-pair distribution over 0–3 stars predicted from rank and labels so far.
* :mod:`.improvement` – the probability that a challenger beats the champion (labels and questions).
* :mod:`.settle` – which pairs decide (value of a rating) and about how many ratings would settle it.
* :mod:`.rated` – every run's NDCG@k on rated answers (the comparisons' measure) and its share of rated
  answers in the top k.
* :mod:`.verdicts` – the compare page's verdict under every completion of the labels, and whether it is
  settled.
"""

from .bounds import MeanBounds, NdcgBounds, mean_bounds, ndcg_bounds
from .improvement import Improvement, probability_of_improvement, sample_stars
from .pairs import STARS, JudgingArrays, judging_arrays, ndcg_for_labels
from .rated import rated_ndcg, rated_share
from .relevance import bucket_counts, expected_gain, relevance_probabilities
from .settle import pair_values, ratings_to_settle
from .verdicts import SETTLED_SHARE, VERDICTS, VerdictShares, randomization_p_values, verdict_shares

__all__ = [
    "SETTLED_SHARE",
    "STARS",
    "VERDICTS",
    "VerdictShares",
    "Improvement",
    "JudgingArrays",
    "MeanBounds",
    "NdcgBounds",
    "bucket_counts",
    "expected_gain",
    "judging_arrays",
    "mean_bounds",
    "ndcg_bounds",
    "ndcg_for_labels",
    "pair_values",
    "probability_of_improvement",
    "randomization_p_values",
    "rated_ndcg",
    "rated_share",
    "ratings_to_settle",
    "relevance_probabilities",
    "sample_stars",
    "verdict_shares",
]
