"""A judge's ratings: its judgments written as its user's ratings, and whether they count toward labels."""

from __future__ import annotations

from collections.abc import Sequence

from django.core.exceptions import ValidationError
from django.db import transaction

from corpus.models import Answer, Question
from ratings.models import JudgeAccount, Rating, RatingSource

from .labels import labels_recompute
from .locks import _lock_pairs
from .validation import validate_stars
from .write import RatingRow, rating_write, ratings_write


def judge_rating_record(
    *, account: JudgeAccount, question: Question, answer: Answer, stars: object, reply: str = ""
) -> Rating:
    """Record (or change) a judge's stars for a pair, with its raw reply, and update the pair's label
    (``rating_write``; a judge's write always stores its reply).

    A judge rates only in its own collection: a pair of another collection is a ValidationError.
    """
    value = validate_stars(stars)
    if question.collection_id != account.collection_id or answer.collection_id != account.collection_id:
        raise ValidationError({"question": "A judge rates only pairs of its own collection."})
    return rating_write(
        rater=account.user,
        question=question,
        answer=answer,
        stars=value,
        source=RatingSource.JUDGE,
        reply=reply,
    )


@transaction.atomic
def judge_trust_set(*, account: JudgeAccount, counts: bool, human_wins: bool) -> int:
    """Whether the judge's ratings count toward labels (and whether people win over it on a pair);
    recomputes the labels of every pair the judge rated. Returns the number of labels written."""
    JudgeAccount.objects.select_for_update().filter(pk=account.pk).update(
        counts=counts, human_wins=human_wins
    )
    account.counts, account.human_wins = counts, human_wins
    pairs = list(Rating.objects.filter(rater_id=account.user_id).values_list("question_id", "answer_id"))
    _lock_pairs(pairs)
    return labels_recompute(pairs=pairs)


@transaction.atomic
def judge_ratings_record(
    *, account: JudgeAccount, judgments: Sequence[tuple[int, int, object, str, float | None]]
) -> int:
    """Record several ``(question id, answer id, stars, reply, certainty)`` of one judge at once, with
    their labels (certainty: how sure the judge was, None when unknown).

    One transaction with every pair locked in one fixed order (``ratings_write``): a judging run writes
    what its calls returned in batches, so a judgment costs a share of one round trip, not several.
    All or nothing: bad stars or a pair outside the judge's collection raise ValidationError.
    """
    rows = [
        RatingRow(q, a, validate_stars(stars), reply, certainty)
        for q, a, stars, reply, certainty in judgments
    ]
    if not rows:
        return 0
    question_ids, answer_ids = {row.question_id for row in rows}, {row.answer_id for row in rows}
    own_questions = Question.objects.filter(pk__in=question_ids, collection_id=account.collection_id).count()
    own_answers = Answer.objects.filter(pk__in=answer_ids, collection_id=account.collection_id).count()
    if own_questions != len(question_ids) or own_answers != len(answer_ids):
        raise ValidationError({"question": "A judge rates only pairs of its own collection."})
    ratings_write(rater=account.user, rows=rows, source=RatingSource.JUDGE)
    return len(rows)
