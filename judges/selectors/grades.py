"""People's grades and a judge's: the label rule over people's ratings only, the pairs people rated with
their texts, a judge's stars."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from corpus.models import Answer, Collection, Question
from judges.models import Judge
from ratings.models import JudgeAccount, Rating
from ratings.services import aggregate_stars

Pair = tuple[int, int]


def human_grades(*, collection: Collection, split: str = "") -> dict[Pair, int]:
    """{(question id, answer id): people's grade} (the label rule over people's ratings only, no judges)."""
    judges = JudgeAccount.objects.values("user_id")
    ratings = Rating.objects.filter(question__collection=collection).exclude(rater_id__in=judges)
    if split:
        ratings = ratings.filter(question__split=split)
    stars: dict[Pair, list[int]] = defaultdict(list)
    for q, a, s in ratings.values_list("question_id", "answer_id", "stars").order_by(
        "question_id", "answer_id"
    ):
        stars[(q, a)].append(s)
    return {pair: aggregate_stars(values)[0] for pair, values in stars.items()}


@dataclass(frozen=True)
class HumanPair:
    question_id: int
    answer_id: int
    question: str
    answer_external_id: str
    answer: str
    stars: int


def human_labelled_pairs(
    *, collection: Collection, split: str = "", limit: int | None = None
) -> list[HumanPair]:
    """The pairs people rated, with their texts and people's grade, lowest pair ids first."""
    grades = human_grades(collection=collection, split=split)
    pairs = sorted(grades)[:limit] if limit is not None else sorted(grades)
    questions = dict(Question.objects.filter(pk__in={q for q, _ in pairs}).values_list("pk", "text"))
    answers = {
        pk: (external_id, f"{title}\n{body}".strip())
        for pk, external_id, title, body in Answer.objects.filter(pk__in={a for _, a in pairs}).values_list(
            "pk", "external_id", "title", "body"
        )
    }
    return [HumanPair(q, a, questions[q], answers[a][0], answers[a][1], grades[(q, a)]) for q, a in pairs]


def judge_grades(*, judge: Judge) -> dict[Pair, int]:
    return {
        (q, a): s
        for q, a, s in Rating.objects.filter(rater_id=judge.account.user_id).values_list(
            "question_id", "answer_id", "stars"
        )
    }
