"""How many ratings a question gets: the agreement sample (questions several people rate, to measure
agreement), the rating budget per question, and where a collection's budget goes.

A question gets at most ``collection.rating_budget`` ratings from the pool (new pairs times the raters
each needs: one, or ``overlap_target_raters`` on the agreement sample); the latest evaluation's
unlabelled top k of a test question are asked for beyond it (they make NDCG@k uncertain).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from corpus.models import Collection, Question, Split
from ratings.models import Rating


def is_overlap_question(*, collection_slug: str, external_id: str, fraction: float) -> bool:
    """Whether the question is in the agreement sample: a stable hash, like the train/test split.

    A different salt from the split's hash so the sample is spread over train and test alike.
    """
    digest = hashlib.sha256(f"overlap\x00{collection_slug}\x00{external_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < fraction


def budgeted(
    candidates: list[int], labels: dict[int, tuple[int, int]], *, budget: int, target: int
) -> list[int]:
    """The pool's answers the queue asks about: those already labelled, then as many new ones as the
    question's rating budget still pays for (each new pair costs ``target`` ratings; labelled pairs short
    of raters are paid for first)."""
    spent = sum(count for count, _ in labels.values())
    owed = sum(max(0, target - labels[a][0]) for a in candidates if a in labels)
    fresh = max(0, budget - spent - owed) // max(1, target)
    new = set([a for a in candidates if a not in labels][:fresh])
    return [a for a in candidates if a in labels or a in new]


@dataclass(frozen=True)
class BudgetSummary:
    """Where a collection's rating budget goes (the progress page's "Rating budget")."""

    per_question: int
    single_raters: int
    single_pairs: int  # new answers a question rated by ``single_raters`` people each gets
    overlap_raters: int
    overlap_pairs: int  # ... and one of the agreement sample, rated by ``overlap_raters`` each
    overlap_percent: int
    training_questions: int
    training_ratings: int

    @property
    def training_spent_percent(self) -> int:
        total = self.per_question * self.training_questions
        return round(100 * self.training_ratings / total) if total else 0

    @property
    def training_per_question(self) -> float:
        return self.training_ratings / self.training_questions if self.training_questions else 0.0


def budget_summary(*, collection: Collection) -> BudgetSummary:
    """How the queue spends ``collection.rating_budget`` (see ``budgeted``), and what training questions
    have had so far (ratings of people and judges alike)."""
    single = collection.target_raters
    overlap = max(collection.overlap_target_raters, single)
    return BudgetSummary(
        per_question=collection.rating_budget,
        single_raters=single,
        single_pairs=collection.rating_budget // single,
        overlap_raters=overlap,
        overlap_pairs=collection.rating_budget // overlap,
        overlap_percent=round(100 * collection.overlap_fraction),
        training_questions=Question.objects.filter(collection=collection, split=Split.TRAIN).count(),
        training_ratings=Rating.objects.filter(
            question__collection=collection, question__split=Split.TRAIN
        ).count(),
    )
