"""What the queue hands a rater: a ``Task`` (one question, why, which answers in display order), the
priorities a question can have (smaller first), and the stable shuffled order answers are shown in."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass

# Disagreement (max − min stars) at which a pair asks for a further opinion.
DISPUTED_SPREAD = 2

PRIORITY_UNLABELLED_IN_TEST = 1
PRIORITY_FEW_RATERS = 2
PRIORITY_DISAGREEMENT = 3
# A judge (a model) grades a pair people rated 2 or more stars apart from them: a person's look shows
# which is right, and feeds the judge's agreement page ("Review the judge").
PRIORITY_JUDGE_DISAGREEMENT = 4
# A judge was least sure of its grade on a pair no person has rated: a person's grade there tells the
# agreement page most about the judge ("Review the judge", its other half).
PRIORITY_JUDGE_UNCERTAIN = 5
PRIORITY_LOW_NDCG = 6


@dataclass(frozen=True)
class Task:
    """One question for one rater: why it was chosen and which answers to show (in display order)."""

    question_id: int
    priority: int | None  # None: nothing left the queue wants from this rater here
    reason: str
    answer_ids: list[int]


def shuffled(answer_ids: Iterable[int], *, rater_id: int, question_id: int) -> list[int]:
    """Answers in an order that hides the ranker's rank but is stable for this rater and question.

    Stable so that a reload (or coming back later) shows the same page; per rater so that position bias,
    if any remains, falls on different answers for different raters.
    """
    return sorted(
        set(answer_ids),
        key=lambda a: hashlib.sha256(f"{rater_id}:{question_id}:{a}".encode()).digest(),
    )
