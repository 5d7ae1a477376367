"""Writes of judges and judging runs, and the run itself (one subject per module).

* :mod:`.crud` – a judge created, changed, trusted (its ratings count toward labels) or deleted, with
  the rater account its ratings belong to.
* :mod:`.lifecycle` – a judging run started, cancelled, resumed, claimed by one worker, taken over when
  its worker went silent.
* :mod:`.run` – the run judged: pairs graded concurrently, saved in batches as the judge's ratings
  (``ratings.services.judge_ratings_record``), counts reported, stopped by cancel, budget or failures.
* :mod:`.grading` – grading one pair (builtin or a chat-completions call), a judge's test on one pair,
  the judge's key kept out of every message.
"""

from .crud import EDITABLE, judge_create, judge_delete, judge_trust, judge_update
from .grading import (
    Grader,
    Judgment,
    PairFailed,
    PairText,
    TestOutcome,
    few_shot_examples,
    judge_test,
    pair_texts,
    redact,
)
from .lifecycle import (
    JUDGING_MAX_ATTEMPTS,
    MAX_PAIRS,
    JudgingConflict,
    JudgingUnavailable,
    judging_cancel,
    judging_claim,
    judging_resume,
    judging_start,
    judgings_resume,
)
from .run import judging_run

__all__ = [
    "EDITABLE",
    "JUDGING_MAX_ATTEMPTS",
    "MAX_PAIRS",
    "Grader",
    "JudgingConflict",
    "JudgingUnavailable",
    "Judgment",
    "PairFailed",
    "PairText",
    "TestOutcome",
    "few_shot_examples",
    "judge_create",
    "judge_delete",
    "judge_test",
    "judge_trust",
    "judge_update",
    "judging_cancel",
    "judging_claim",
    "judging_resume",
    "judging_run",
    "judging_start",
    "judgings_resume",
    "pair_texts",
    "redact",
]
