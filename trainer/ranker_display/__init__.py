"""How the rankers pages put versions, comparisons and trainings into words and numbers.

Pure presentation: no queries. Figures as :mod:`evaluation.numbers` writes them everywhere (NDCG 0.412,
differences +0.041 and −0.012, "p = 0.004" or "p < 0.001"); durations in seconds or minutes.

* :mod:`.words` – methods, training candidates and features in words.
* :mod:`.figures` – figures in sentences: a difference with its interval, a comparison, shares, a duration.
* :mod:`.comparison` – a version against the champion of its time, and counting the unrated answers.
* :mod:`.versions` – a version as the pages show it: headline figures, training details, features.
* :mod:`.trainings` – a training job as its progress block shows it.
"""

from trainer.ranker_display.comparison import Comparison, Predicted
from trainer.ranker_display.figures import (
    ci_text,
    comparison_text,
    difference_text,
    duration_text,
    percent_text,
    rated_shares_text,
    signed_text,
)
from trainer.ranker_display.trainings import TrainingView
from trainer.ranker_display.versions import (
    Candidate,
    Feature,
    Setting,
    VersionDetails,
    VersionView,
    features_of,
    unlisted_zero_text,
)
from trainer.ranker_display.words import FEATURE_WORDS, METHOD_WORDS, RERANK_WORDS, method_text

__all__ = [
    "FEATURE_WORDS",
    "METHOD_WORDS",
    "RERANK_WORDS",
    "Candidate",
    "Comparison",
    "Feature",
    "Predicted",
    "Setting",
    "TrainingView",
    "VersionDetails",
    "VersionView",
    "ci_text",
    "comparison_text",
    "difference_text",
    "duration_text",
    "features_of",
    "method_text",
    "percent_text",
    "rated_shares_text",
    "signed_text",
    "unlisted_zero_text",
]
