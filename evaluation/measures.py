"""The measures the app shows, one name and one sentence each: every page, message, API description and
doc names a figure through this module, so one thing has one name everywhere.

* :data:`NDCG` – the **headline**: ``NDCG@k`` exactly as trec_eval's ``ndcg_cut.k`` computes it. An
  unrated answer in the top k counts as 0 stars. Evaluation runs store it; the dashboard, the run and
  version pages, the Rankers page, the runs list and the API show it, with the share of rated answers in
  the top k beside it (:data:`RATED_SHARE`).
* :data:`NDCG_RATED` – **every comparison of two rankings** (the promotion gate, the compare page, an
  export's cost, the champion/challenger panel): ``NDCG@k on rated answers``, trec_eval ``-J``: each
  ranking is condensed to its rated answers before NDCG@k is computed
  (``evaluation.metrics.judged``). Chosen by measurement (``bench/bench_definitions.py``): under the
  pooled ratings the rating queue collects, it orders two versions as their complete judgments do more
  often than the headline's rule, which marks a version down for every answer it finds that nobody rated
  yet.
* :data:`NDCG_ESTIMATE` – ``estimated NDCG@k``: what the headline would be if every answer in the top k
  were rated, each unrated answer counted as its predicted stars (``evaluation.uncertainty``).
* :data:`NDCG_CV` – ``cross-validated NDCG@k``: the training's own check, each training question scored by
  a model that did not learn from it (unrated answers left out, or, on questions an imported ground truth
  judges, unlisted answers counted as 0 stars: ``trainer.learner``).

* :data:`ONLINE_DELTA` – ``online Δ``: an online test's verdict from live clicks (``evaluation.online``):
  (wins + ½ ties) / (wins + losses + ties) − ½ of the challenger over the interleaved queries with clicks.

Clicks beside ratings (``evaluation.selectors.clicks``, the judges' "Clicks beside ratings" page, the API):
:data:`CASCADE_ATTRACTIVENESS` (the default), :data:`COEC` and :data:`CLICK_ATTRACTIVENESS`, the three implicit
judgments of a pair from the production log,
and the agreement of their stars with people's or a judge's, :data:`WEIGHTED_KAPPA`, :data:`EXACT_AGREEMENT`
and :data:`KENDALL_TAU` (formulas in ``evaluation.online`` and ``judges.stats``); their names take no k.

``name(key, k)`` gives the name, ``why(key, k)`` the one plain sentence that says how it differs from the
headline; the template tags ``{% measure "ndcg_rated" k %}`` and ``{% measure_why "ndcg_rated" k %}``
(``evaluation/templatetags/numbers.py``) write the same.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Measure:
    key: str
    name: str  # "{k}" is the cut-off
    why: str


NDCG = "ndcg"
NDCG_RATED = "ndcg_rated"
NDCG_ESTIMATE = "ndcg_estimate"
NDCG_CV = "ndcg_cv"
RATED_SHARE = "rated_share"
ONLINE_DELTA = "online_delta"
COEC = "coec"
CLICK_ATTRACTIVENESS = "click_attractiveness"
CASCADE_ATTRACTIVENESS = "cascade_attractiveness"
WEIGHTED_KAPPA = "weighted_kappa"
EXACT_AGREEMENT = "exact_agreement"
KENDALL_TAU = "kendall_tau"

MEASURES: dict[str, Measure] = {
    m.key: m
    for m in (
        Measure(
            NDCG,
            "NDCG@{k}",
            "The headline, as trec_eval's ndcg_cut.{k}: an unrated answer in the top {k} counts as 0 stars, "
            "so it rises as people rate.",
        ),
        Measure(
            NDCG_RATED,
            "NDCG@{k} on rated answers",
            "Comparisons leave unrated answers out, so a version is not marked down for answers nobody has "
            "rated yet; it is higher than NDCG@{k} when the top {k} holds unrated answers.",
        ),
        Measure(
            NDCG_ESTIMATE,
            "estimated NDCG@{k}",
            "What NDCG@{k} would likely be if every answer in the top {k} were rated, each unrated answer "
            "counted as the stars predicted for it.",
        ),
        Measure(
            NDCG_CV,
            "cross-validated NDCG@{k}",
            "The training's own check on the training questions, each scored by a model that did not learn "
            "from it (an answer the queue's raters have not rated is left out; one an imported ground truth "
            "does not list counts as 0 stars); it says which candidate to keep, not how the version does on "
            "the test questions.",
        ),
        Measure(
            RATED_SHARE,
            "rated answers in the top {k}",
            "The share of the top {k} answers that people have rated: the closer to 100%, the closer "
            "NDCG@{k} and NDCG@{k} on rated answers are to what complete ratings would give.",
        ),
        Measure(
            ONLINE_DELTA,
            "online Δ",
            "From live traffic, not ratings: of the interleaved queries with clicks, the share the challenger "
            "won (a tie counting half) minus ½, so +0.050 means users preferred it on 55% of them.",
        ),
        Measure(
            COEC,
            "COEC",
            "Clicks over expected clicks, as OpenSearch's Search Relevance Workbench computes it: a pair's "
            "clicks divided by what an average hit at its best rank would get from as many impressions, so 1 "
            "is as clicked as expected there; it does not correct for answers shown only low.",
        ),
        Measure(
            CASCADE_ATTRACTIVENESS,
            "cascade-corrected click rate",
            "The chance that a user who reads the answer clicks it, from a cascade click model (DBN) fitted by "
            "EM: users read down the list and stop once a click satisfies them, so an answer is not marked "
            "down for being shown low or below an answer that ends searches.",
        ),
        Measure(
            CLICK_ATTRACTIVENESS,
            "position-corrected click rate",
            "The chance that a user who looks at the answer clicks it, from a position-based click model "
            "fitted by EM: clicks corrected for how often users look at each rank, so an answer is not "
            "marked down for where it was shown.",
        ),
        Measure(
            WEIGHTED_KAPPA,
            "weighted κ",
            "Agreement of two graders' stars on the pairs both graded, beyond what chance gives, a near "
            "miss costing less than a far one (quadratic weights): 1 is perfect, 0 what chance gives.",
        ),
        Measure(
            EXACT_AGREEMENT,
            "exact agreement",
            "The share of the pairs both graded to which they gave the same stars; unlike weighted κ it "
            "is not corrected for chance.",
        ),
        Measure(
            KENDALL_TAU,
            "Kendall τ-b",
            "Whether the click figure orders the pairs as the stars do (τ-b, ties allowed): 1 the same "
            "order, 0 no relation, −1 reversed; it uses the figure itself, not its stars, so it does not "
            "depend on the star thresholds.",
        ),
    )
}


def name(key: str, k: int = 10) -> str:
    """The measure's name with its cut-off: ``name("ndcg_rated", 10)`` is "NDCG@10 on rated answers"."""
    return MEASURES[key].name.format(k=k)


def why(key: str, k: int = 10) -> str:
    """The one sentence that says what the measure is and how it differs from the headline."""
    return MEASURES[key].why.format(k=k)
