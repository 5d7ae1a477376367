"""Reads of ratings and labels (one subject per module).

* :mod:`.labels` – labels by collection and by question; the exports' rows of labels and of ratings.
* :mod:`.progress` – training progress: ratings a day, each rater's work, each split's coverage.
* :mod:`.agreement` – agreement between people: pairs rated more than once, leniency, disagreements.
* :mod:`.rating_page` – what the rating pages read: a save's target, judges' replies, raters' notes.
* :mod:`.imports` – the imports of judgments: the questions the learner reads as complete, the imports listed.
* :mod:`.changes` – the questions whose ratings or labels changed since a position (the queue's feed).
"""

from .agreement import (
    Disagreement,
    agreement_units,
    disagreements,
    leniency_by_rater,
    multi_rated_ratings,
)
from .changes import label_changes
from .imports import (
    ImportRow,
    complete_question_ids,
    ground_truth_imports,
    imports_judging,
)
from .labels import (
    RatingRow,
    ground_truth_rows,
    labels_by_question,
    labels_for_collection,
    rating_rows,
)
from .progress import (
    DayCount,
    RaterSummary,
    SplitCoverage,
    coverage_by_split,
    rater_summaries,
    rating_count_since,
    ratings_per_day,
)
from .rating_page import (
    JudgeReply,
    RaterNote,
    RatingTarget,
    judge_replies,
    notes_for_question,
    rating_target,
)

__all__ = [
    "DayCount",
    "Disagreement",
    "ImportRow",
    "JudgeReply",
    "RaterNote",
    "RaterSummary",
    "RatingRow",
    "RatingTarget",
    "SplitCoverage",
    "agreement_units",
    "complete_question_ids",
    "coverage_by_split",
    "disagreements",
    "ground_truth_imports",
    "ground_truth_rows",
    "imports_judging",
    "judge_replies",
    "label_changes",
    "labels_by_question",
    "labels_for_collection",
    "leniency_by_rater",
    "multi_rated_ratings",
    "notes_for_question",
    "rater_summaries",
    "rating_count_since",
    "rating_rows",
    "rating_target",
    "ratings_per_day",
]
