"""Implicit judgments of a collection's pairs from the production log (``ubi``): COEC as OpenSearch's Search
Relevance Workbench computes it, the cascade (DBN) model's attractiveness and the position-based model's,
each as 0–3 stars.

What is read: the UBI events of the collection's application (``application`` of their query, or of the
event itself when its query is unknown; by default the collection's slug, which ``ranker_server`` writes),
with ``position.ordinal ≤ max_rank`` and, when given, a UTC day within [start_date, end_date] (both days
included, as OpenSearch's ``range`` with ``format: yyyy-MM-dd`` reads them). Each event's query text is its
query record's ``user_query``.

Matching a logged (query text, object_id) to a pair of the collection: the text, **normalised**
(``ubi.production_questions.normalise_query``: case-folded, runs of white space as one space, trimmed), equals a question's normalised
text, and the object_id is an answer's ``external_id`` (what ``ranker_server`` serves as ``id``). COEC is
computed per normalised text, so "Laptop " and "laptop" are one query (SRW groups by the exact text; on a
log whose texts are already normalised the figures are SRW's). A text no question has is **unmatched**:
counted, and the frequent ones listed with their counts (production questions worth importing). Two
questions with the same normalised text both get the pair's judgment.

* COEC (``evaluation.online.coec``, ``first_ordinal=1``: our ordinals count from 1): per pair
  ``clicks / (ctr(best rank) · impressions)`` with ``ctr(r)`` over every kept event of the application,
  matched or not; stars by ``COEC_THRESHOLDS``. A pair with no impression event has COEC 0 as in SRW but
  no stars (no evidence).
* PBM (``evaluation.online.click_model``): rows (ordinal, pair, clicks, impressions) of the same events,
  where a click also counts as the hit having been seen: n = max(impression events, click events) per
  (ordinal, pair), so a page that sends clicks but no impressions still gives the model its evidence.
  Stars by ``ATTRACTIVENESS_THRESHOLDS``.
* DBN (``evaluation.online.dbn``, the default bias-corrected estimate: ``DEFAULT_METHOD``): sessions are
  query ids; a session's rows are its (ordinal, pair) with an impression or a click event, clicked when
  any click event is there (a click also counts as the hit having been shown). Its attractiveness a,
  the chance that a user who reads the hit clicks it, is what gets stars, by ``ATTRACTIVENESS_THRESHOLDS``
  (why a and not a · s: ``evaluation.online.dbn``; the simulation that chose it: bench/README.md,
  *A cascade click model for implicit labels*).

The package, a file a subject:

* :mod:`.parameters` – the parameters (max rank, dates, application), the methods and their measures, one
  pair's judgment and a collection's, the star mappings.
* :mod:`.judgments` – ``implicit_judgments``: the events kept, matched to pairs, every method's figures.
* :mod:`.fits` – the position-based and the cascade (DBN) model fitted to the same counted rows.
* :mod:`.cached` – ``implicit_judgments_cached``, keyed by the log's and the collection's state.
"""

from evaluation.selectors.clicks.cached import CLICKS_CACHE_SECONDS, implicit_judgments_cached
from evaluation.selectors.clicks.judgments import implicit_judgments
from evaluation.selectors.clicks.parameters import (
    COEC_METHOD,
    DBN_METHOD,
    DEFAULT_MAX_RANK,
    DEFAULT_METHOD,
    MAX_MAX_RANK,
    MEASURE_OF,
    METHODS,
    PBM_METHOD,
    UNMATCHED_SHOWN,
    ClickParameters,
    ImplicitJudgment,
    ImplicitJudgments,
    normalise,
    star_mapping,
)

__all__ = [
    "CLICKS_CACHE_SECONDS",
    "COEC_METHOD",
    "DBN_METHOD",
    "DEFAULT_MAX_RANK",
    "DEFAULT_METHOD",
    "MAX_MAX_RANK",
    "MEASURE_OF",
    "METHODS",
    "PBM_METHOD",
    "UNMATCHED_SHOWN",
    "ClickParameters",
    "ImplicitJudgment",
    "ImplicitJudgments",
    "implicit_judgments",
    "implicit_judgments_cached",
    "normalise",
    "star_mapping",
]
