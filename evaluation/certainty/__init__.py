"""How sure are we? What the dashboard, the rating queue and the training loop read from the uncertainty
estimators (:mod:`evaluation.uncertainty`) for a ranker's versions: selectors, reads only.

* :mod:`.versions` – which versions are compared: picked, or the champion and the newest other version.
* :mod:`.rankings` – how each version ranks the test questions: from its latest run, else asked now.
* :mod:`.state` – the estimators' arrays for the test questions and the predicted relevance of each pair.
* :mod:`.estimates` – the headline's bounds and estimate, P(challenger better), the verdict once every
  answer is rated, and about how many ratings would settle each.
* :mod:`.deciding` – what the rating queue reads: the pairs that decide, the training pairs least sure of.
* :mod:`.decision` – what a promotion decision keeps of the comparison (``comparison_json``).
* :mod:`.texts` – the sentences pages show: ratings to settle, the verdict, the panel's plain answer.
* :mod:`.dashboard` – the dashboard's "How sure are we?" panel.
"""

from .dashboard import Panel, panel
from .deciding import DecidingPair, deciding_pairs, unsure_training_pairs, why_nothing_decides
from .decision import comparison_json
from .estimates import (
    COMPARISON_FLOOR,
    HEADLINE_TARGET,
    VERDICT_DRAWS,
    Certainty,
    ComparisonCertainty,
    HeadlineCertainty,
    certainty,
)
from .rankings import MAX_K, RANKINGS_CACHE_SECONDS, RankingsUnavailable, version_rankings
from .state import JudgingState, judging_state
from .texts import comparison_plain_text, headline_plain_text, settle_text, verdict_text
from .versions import VersionPair, version_pair, version_text

__all__ = [
    "COMPARISON_FLOOR",
    "HEADLINE_TARGET",
    "MAX_K",
    "RANKINGS_CACHE_SECONDS",
    "VERDICT_DRAWS",
    "Certainty",
    "ComparisonCertainty",
    "DecidingPair",
    "HeadlineCertainty",
    "JudgingState",
    "Panel",
    "RankingsUnavailable",
    "VersionPair",
    "certainty",
    "comparison_json",
    "comparison_plain_text",
    "deciding_pairs",
    "headline_plain_text",
    "judging_state",
    "panel",
    "settle_text",
    "unsure_training_pairs",
    "verdict_text",
    "version_pair",
    "version_rankings",
    "version_text",
    "why_nothing_decides",
]
