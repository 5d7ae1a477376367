"""Listening to production: interleaved online tests and implicit judgments from clicks; pure numpy, no
Django.

* ``rankers.interleaving`` – team-draft interleaving of two rankings, the same list for the same query_id
  (in rankers: ranker_server serves it; re-exported here).
* :mod:`.credit` – per query, clicks credit the clicked hit's team; wins, losses, ties.
* :mod:`.verdict` – Δ, its always-valid 95% interval, the mixture SPRT and the online verdict.
* :mod:`.coec` – clicks over expected clicks, as OpenSearch's Search Relevance Workbench computes them.
* :mod:`.click_model` – the position-based click model (examination × attractiveness) fitted by EM.
* :mod:`.dbn` – the cascade-family DBN click model (attractiveness, satisfaction), SDBN then EM.
* :mod:`.stars` – COEC and attractiveness mapped to 0–3 stars, with the thresholds.
"""

from rankers.interleaving import (
    CHALLENGER,
    CHAMPION,
    NO_TEAM,
    Interleaving,
    coin_flips,
    team_draft_interleave,
)

from .click_model import PositionBasedModel, fit_position_based_model
from .coec import NO_RANK, Coec, coec, expected_ctr
from .credit import Credit, Tally, credit_clicks, tally
from .dbn import CascadeModel, fit_dbn
from .stars import ATTRACTIVENESS_THRESHOLDS, COEC_THRESHOLDS, NO_STARS, to_stars
from .verdict import (
    ALPHA,
    BETTER,
    KEEP_GOING,
    MIXTURE,
    NEGLIGIBLE,
    POWER,
    VERDICTS,
    WITHIN_NOISE,
    WORSE,
    OnlineVerdict,
    log_gamma,
    log_mixture_ratio,
    online_verdict,
    sequential_p_values,
    win_share_interval,
)

__all__ = [
    "ALPHA",
    "ATTRACTIVENESS_THRESHOLDS",
    "COEC_THRESHOLDS",
    "NO_RANK",
    "NO_STARS",
    "CascadeModel",
    "Coec",
    "PositionBasedModel",
    "coec",
    "expected_ctr",
    "fit_dbn",
    "fit_position_based_model",
    "to_stars",
    "BETTER",
    "CHALLENGER",
    "CHAMPION",
    "KEEP_GOING",
    "MIXTURE",
    "NEGLIGIBLE",
    "NO_TEAM",
    "POWER",
    "VERDICTS",
    "WITHIN_NOISE",
    "WORSE",
    "Credit",
    "Interleaving",
    "OnlineVerdict",
    "Tally",
    "coin_flips",
    "credit_clicks",
    "log_gamma",
    "log_mixture_ratio",
    "online_verdict",
    "sequential_p_values",
    "tally",
    "team_draft_interleave",
    "win_share_interval",
]
