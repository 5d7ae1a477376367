"""Reads of evaluation runs for the dashboard, the drilldown, the compare pages and the API.

Every function runs a fixed number of queries whatever the number of runs, questions or ratings (the
dashboard tests assert it), so pages stay fast with a long history.

* :mod:`.runs` – a ranker's runs, one run (by id, or within a collection), the successful run before it,
  its per-question results and files, the unknown answer ids its ranker returned.
* :mod:`.dashboard` – one ranker's dashboard: latest and active run, the history chart and its champion
  changes, a rater's own contribution.
* :mod:`.questions` – the questions of a run worth a look: the worst, those needing ratings first, those
  without a known good answer.
* :mod:`.change` – why the headline moved from one run to the next: label effect and ranker effect.
* :mod:`.compare` – 2 to 6 runs side by side: the question matrix and every pair, Holm-corrected.
* :mod:`.choices` – what the compare page offers (runs, and versions through their latest run) and what a
  choice means.

Figures are written as :mod:`evaluation.numbers` writes them (its ``figure``, ``signed`` and ``p_text``
are re-exported here, where they used to live).
"""

from evaluation.numbers import figure, p_text, signed

from .change import CHANGE_CACHE_SECONDS, SHOWN, ChangeExplanation, QuestionDelta, change_explained
from .choices import CHOICE_RUNS, CHOICE_VERSIONS, Choice, Options, choice_of, compare_options
from .compare import (
    COMPARE_MAX_RUNS,
    COMPARE_MIN_RUNS,
    MATRIX_SHOWN,
    PAIR_EXAMPLES,
    MatrixRow,
    PairResult,
    RunsComparison,
    runs_compare,
)
from .dashboard import (
    ACTIVE,
    CHAMPION_MARKS,
    RECENT_RUNS,
    ChampionMark,
    Contribution,
    Dashboard,
    HistoryPoint,
    champion_marks,
    dashboard,
    history,
    rankers_for_dashboard,
    rater_contribution,
)
from .questions import mostly_unlabelled, needs_ratings, no_good_answer_questions, worst_questions
from .runs import (
    UnknownIds,
    latest_runs_by_version,
    previous_successful_run,
    question_results,
    run_detail,
    run_export_rows,
    run_in_collection,
    runs_for_ranker,
    unknown_ids,
)

__all__ = [
    "CHOICE_RUNS",
    "CHOICE_VERSIONS",
    "Choice",
    "Options",
    "choice_of",
    "compare_options",
    "ACTIVE",
    "CHAMPION_MARKS",
    "CHANGE_CACHE_SECONDS",
    "COMPARE_MAX_RUNS",
    "COMPARE_MIN_RUNS",
    "MATRIX_SHOWN",
    "PAIR_EXAMPLES",
    "RECENT_RUNS",
    "SHOWN",
    "ChampionMark",
    "ChangeExplanation",
    "Contribution",
    "Dashboard",
    "HistoryPoint",
    "MatrixRow",
    "PairResult",
    "QuestionDelta",
    "RunsComparison",
    "UnknownIds",
    "champion_marks",
    "change_explained",
    "dashboard",
    "figure",
    "history",
    "mostly_unlabelled",
    "needs_ratings",
    "no_good_answer_questions",
    "p_text",
    "previous_successful_run",
    "question_results",
    "rankers_for_dashboard",
    "rater_contribution",
    "run_detail",
    "run_export_rows",
    "run_in_collection",
    "runs_compare",
    "latest_runs_by_version",
    "runs_for_ranker",
    "signed",
    "unknown_ids",
    "worst_questions",
]
