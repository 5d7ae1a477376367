"""What the queue reads of judges (models that rate beside people): the pairs where a judge's grade
is far from people's label, and each judge's least sure grades on pairs no person rated ("Review the
judge", both halves)."""

from __future__ import annotations

from collections import defaultdict

from django.db.models import F

from corpus.models import Collection
from raters.next_task.task import DISPUTED_SPREAD
from ratings.models import JudgeAccount, Label, Rating

# How many of each judge's least certain judgments (pairs no person rated) the queue offers people.
UNCERTAIN_REVIEWED = 20


def judge_disputed_pairs(*, collection: Collection) -> dict[int, list[int]]:
    """{question id: answer ids} where a judge's stars are DISPUTED_SPREAD or more from people's label
    (a label with at least one person's rating), biggest gap first."""
    judges = list(JudgeAccount.objects.filter(collection=collection).values_list("user_id", flat=True))
    if not judges:  # no judge: no label read (the collection's every label, on every call of the queue)
        return {}
    gaps: dict[tuple[int, int], int] = {}
    labels = {
        (q, a): gain
        for q, a, gain in Label.objects.filter(
            question__collection=collection, rater_count__gt=F("judge_count")
        ).values_list("question_id", "answer_id", "gain")
    }
    for q, a, stars in Rating.objects.filter(
        question__collection=collection, rater_id__in=judges
    ).values_list("question_id", "answer_id", "stars"):
        gain = labels.get((q, a))
        if gain is not None and abs(stars - gain) >= DISPUTED_SPREAD:
            gaps[(q, a)] = max(gaps.get((q, a), 0), abs(stars - gain))
    result: dict[int, list[int]] = defaultdict(list)
    for (q, a), _ in sorted(gaps.items(), key=lambda item: (-item[1], item[0])):
        result[q].append(a)
    return dict(result)


def judge_uncertain_pairs(
    *, collection: Collection, per_judge: int = UNCERTAIN_REVIEWED
) -> dict[int, list[int]]:
    """{question id: answer ids}: each judge's ``per_judge`` least certain judgments (``Rating.certainty``,
    smallest first, then pair ids; judgments without a certainty left out) on pairs no person rated.

    Certainties are compared within one judge only: each kind measures them on its own scale."""
    judges = list(JudgeAccount.objects.filter(collection=collection).values_list("user_id", flat=True))
    if not judges:
        return {}
    rated_by_people = set(
        Rating.objects.filter(question__collection=collection)
        .exclude(rater_id__in=judges)
        .values_list("question_id", "answer_id")
    )
    chosen: dict[tuple[int, int], None] = {}
    for judge in judges:
        taken = 0
        for q, a in (
            Rating.objects.filter(rater_id=judge, question__collection=collection, certainty__isnull=False)
            .order_by("certainty", "question_id", "answer_id")
            .values_list("question_id", "answer_id")
            .iterator()
        ):
            if (q, a) in rated_by_people:
                continue
            chosen.setdefault((q, a), None)
            taken += 1
            if taken >= per_judge:
                break
    result: dict[int, list[int]] = defaultdict(list)
    for q, a in chosen:
        result[q].append(a)
    return dict(result)
