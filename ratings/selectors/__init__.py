"""Reads of ratings and labels (one subject per module).

* :mod:`.ratings` – labels, training progress, agreement, raters, notes and disagreements.
* :mod:`.imports` – the imports of judgments: the questions the learner reads as complete, the imports listed.
* :mod:`.changes` – the questions whose ratings or labels changed since a position (the queue's feed).
"""

from .changes import label_changes
from .imports import (
    ImportRow,
    complete_question_ids,
    ground_truth_imports,
    imports_judging,
)
from .ratings import (
    DayCount,
    Disagreement,
    JudgeReply,
    RaterNote,
    RaterSummary,
    RatingRow,
    RatingTarget,
    SplitCoverage,
    agreement_units,
    coverage_by_split,
    disagreements,
    ground_truth_rows,
    judge_replies,
    labels_by_question,
    labels_for_collection,
    leniency_by_rater,
    multi_rated_ratings,
    notes_for_question,
    rater_summaries,
    rating_count_since,
    rating_rows,
    rating_target,
    ratings_per_day,
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
