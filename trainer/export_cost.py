"""What staying inside the engine costs, and whether that figure can be trusted (issue 35 §3).

``cost`` = ndcg_version − ndcg_export_app, NDCG@k on rated answers (``evaluation.measures.NDCG_RATED``)
on the test questions: what the version's reranker ranks better than the export the engine runs
(negative: the export ranks better). On sparse labels its sign can point the wrong way: rated answers
are few in either top k, each ranking is condensed to them, and two rankings that differ in the unrated
answers they put first score alike (on covidfaq, positive-only labels: +0.003 on rated answers, +0.116 on
complete judgments). ``export_cost`` shows it only when it can be trusted (the rule measured in
``bench/bench_export_vectors.py``, bench/README.md *Sign of the export's cost*):

1. **not measurable yet** when the rated share of the top k (``evaluation.measures.RATED_SHARE``) of
   the version's or of the export's ranking is below :data:`MIN_RATED_SHARE`; it names N, the ratings
   of the test questions' top k answers that would bring both up to it:
   ``N = max_r ⌈s_min · P⌉ − rated_r`` (P = k × test questions, rated_r the rated places of ranking r),
   at most the distinct unrated answers of the two top ks: a lower bound ("at least N"), as an answer
   rated in both top ks counts for both (rated in a random order, covidfaq needed 2,738 where N = 2,174);
2. **within noise** when the 95% bootstrap interval of the per-question difference
   ``d_q = NDCG_rated(version, q) − NDCG_rated(export, q)`` (``evaluation.metrics.stats.compare_runs``)
   holds 0;
3. else the cost, with its interval.

``cost_figures`` computes what the rule reads when the export is fitted (stored in its ``figures``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from evaluation import measures
from evaluation.metrics.stats import compare_runs
from evaluation.numbers import count, figure, interval, number, percent, signed
from evaluation.services import rated_share

#: Below this share of rated answers in the top k of the version's or the export's ranking, the cost's
#: sign is not trusted (bench/README.md, *Sign of the export's cost*).
MIN_RATED_SHARE = 0.5
RESAMPLES = 2000
SEED = 0

MEASURED = "measured"
WITHIN_NOISE = "within noise"
NOT_MEASURABLE = "not measurable yet"


def cost_figures(
    *,
    version: Sequence[Sequence[str]] | None,
    export: Sequence[Sequence[str]],
    labels: Sequence[dict[str, int]],
    k: int,
    per_question: tuple[np.ndarray, np.ndarray],
) -> dict[str, Any]:
    """The figures ``export_cost`` reads, of the test questions' rankings by the version and by the
    export (as the app ranks it) and their per-question NDCG@k on rated answers: ``cost_ci_low`` /
    ``cost_ci_high`` (95% bootstrap interval of the mean difference version − export), ``rated_share_version``
    / ``rated_share_export`` (share of the top-k places holding a rated answer), ``cost_places``
    (k × questions) and ``cost_unrated`` (distinct unrated answers in the two top ks). Empty without a
    version or questions."""
    if version is None or not labels:
        return {}
    result = compare_runs(*per_question, n_resamples=RESAMPLES, n_permutations=RESAMPLES, seed=SEED)
    unrated = {
        (i, a)
        for i, known in enumerate(labels)
        for ranking in (version[i], export[i])
        for a in ranking[:k]
        if a not in known
    }
    return {
        "cost_ci_low": None if math.isnan(result.ci_low) else round(result.ci_low, 6),
        "cost_ci_high": None if math.isnan(result.ci_high) else round(result.ci_high, 6),
        "rated_share_version": round(rated_share(version, labels, k), 6),
        "rated_share_export": round(rated_share(export, labels, k), 6),
        "cost_places": k * len(labels),
        "cost_unrated": len(unrated),
    }


@dataclass(frozen=True)
class ExportCost:
    """The export's cost as the app shows it: ``status`` (:data:`MEASURED`, :data:`WITHIN_NOISE`,
    :data:`NOT_MEASURABLE`), ``cost`` (None unless measured), ``to_rate`` (N when not measurable) and
    ``text``, the words shown after "What that costs: "."""

    status: str
    cost: float | None
    text: str
    to_rate: int = 0

    def as_json(self) -> dict[str, Any]:
        return {"status": self.status, "cost": self.cost, "to_rate": self.to_rate, "text": self.text}


def _rated_places(share: float, places: int) -> int:
    return round(share * places)


def export_cost(figures: dict[str, Any]) -> ExportCost:
    """The rule of the module docstring applied to an export's ``figures``. An export fitted before the
    rated shares were kept has no trusted cost: it says so and to train again."""
    k = int(figures.get("k") or 10)
    name = measures.name(measures.NDCG_RATED, k)
    cost = number(figures.get("cost"))
    shares = (number(figures.get("rated_share_version")), number(figures.get("rated_share_export")))
    places = int(number(figures.get("cost_places")) or 0)
    if cost is None:
        return ExportCost(NOT_MEASURABLE, None, "not measured (no test question was ranked by this version).")
    if None in shares or not places:
        return ExportCost(
            NOT_MEASURABLE,
            None,
            f"not measured: this export was fitted before the {measures.name(measures.RATED_SHARE, k)} "
            "were kept, without which the cost's sign cannot be trusted; train the ranker again.",
        )
    known = [float(share) for share in shares if share is not None]
    rated = f"{percent(known[0])} of this version's top {k} and {percent(known[1])} of the export's are rated"
    if min(known) < MIN_RATED_SHARE:
        needed = math.ceil(MIN_RATED_SHARE * places - 1e-9)
        short = max(needed - _rated_places(share, places) for share in known)
        to_rate = max(1, min(short, int(number(figures.get("cost_unrated")) or short)))
        return ExportCost(
            NOT_MEASURABLE,
            None,
            f"not measurable yet: rate at least {count(to_rate)} more answers of the test questions' top {k} "
            f"({rated}; {name} needs {percent(MIN_RATED_SHARE)} of each before its sign can be trusted).",
            to_rate,
        )
    low, high = number(figures.get("cost_ci_low")), number(figures.get("cost_ci_high"))
    if low is None or high is None or low <= 0 <= high:
        return ExportCost(
            WITHIN_NOISE,
            None,
            f"within noise: {name} of this version minus the exported model lies between "
            f"{interval(low, high)} (95% CI), which holds 0 ({rated}).",
        )
    return ExportCost(
        MEASURED,
        cost,
        f"{signed(cost)} {name} (95% CI {interval(low, high)}; this version minus the exported model; "
        f"negative: the export ranks better; {rated}).",
    )


def served_gain_kept(
    *,
    figures: dict[str, Any],
    shown: ExportCost,
    method: str,
    importances: dict[str, float],
    left_out: list[dict[str, str]],
) -> str:
    """For a version that ranks with trees (LambdaMART), in words: the trees over the app's features are
    not what the exported linear model over the engine's features computes, so say how much of the
    version's gain over the engine alone the export keeps, ``kept = (ndcg_export_app − ndcg_engine) /
    (ndcg_version − ndcg_engine)`` (NDCG@k on rated answers), only when the cost can be trusted
    (``shown`` not :data:`NOT_MEASURABLE`: the same figures), which left-out feature carries most of the
    trees' gain, and that ``ranker_server`` keeps all of it. "" for any other version."""
    if method != "lambdamart":
        return ""
    k = int(figures.get("k") or 10)
    name = measures.name(measures.NDCG_RATED, k)
    outside = {item.get("feature") for item in left_out}
    lead = max(
        ((f, share) for f, share in importances.items() if f in outside and number(share) is not None),
        key=lambda pair: pair[1],
        default=None,
    )
    words = "This version ranks with trees (LambdaMART) over the app's features"
    if lead is not None:
        words += f", {percent(lead[1])} of their gain from {lead[0]}, which the engine cannot compute"
    words += ": the exported linear model over the engine's features does not copy them. "
    engine, app, own = (
        number(figures.get(key)) for key in ("ndcg_engine", "ndcg_export_app", "ndcg_version")
    )
    if shown.status == NOT_MEASURABLE or engine is None or app is None or own is None:
        words += (
            "How much of the version's gain over the engine alone the export keeps is not measurable yet "
            "(as its cost). "
        )
    elif own > engine:
        kept = min(max((app - engine) / (own - engine), 0.0), 1.0)
        words += (
            f"The export keeps {percent(kept)} of the version's gain over the engine alone ({name}: engine "
            f"alone {figure(engine)}, export {figure(app)}, this version {figure(own)}). "
        )
    return words + (
        "To keep all of it, serve the version itself in front of the engine: manage.py ranker_server "
        "--ranker ID (docs/rankers.md, Serving a trained engine ranker where production calls)."
    )


__all__ = [
    "MEASURED",
    "MIN_RATED_SHARE",
    "NOT_MEASURABLE",
    "WITHIN_NOISE",
    "ExportCost",
    "cost_figures",
    "export_cost",
    "served_gain_kept",
]
