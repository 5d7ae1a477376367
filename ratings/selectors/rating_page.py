"""What the rating pages read: a per-answer request's target in one query, the judges' replies and the
raters' notes on a question's answers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from django.db import connection
from django.db.models import Model

from corpus.models import Answer, Collection, Membership, Question
from ratings.models import Rating, RatingSource

_M = TypeVar("_M", bound=Model)


@dataclass(frozen=True)
class RatingTarget:
    """What a per-answer request (save, undo) needs, read in one query by ``rating_target``."""

    collection: Collection
    question: Question
    answer: Answer
    question_here: bool  # the question exists and is in the answer's collection
    member_role: str | None  # the user's Membership.role in the collection, None for a non-member


def rating_target(*, slug: str, question_id: int, answer_id: int, user_id: int) -> RatingTarget | None:
    """The answer in the collection ``slug``, with its collection, whether the question is in that collection,
    and the user's membership role there, in one query; None if there is no such answer in the collection.

    Raw SQL on purpose: this runs on every star clicked, and building the equivalent queryset (a join and two
    subqueries) cost ~1.4 ms of CPU per request against ~0.15 ms for this. Only the fields the hot path
    uses are loaded (the others are deferred and would load on first use); none needs a type conversion, so
    the same statement works on PostgreSQL and SQLite.
    """
    answer_t, collection_t = Answer._meta.db_table, Collection._meta.db_table
    question_t, membership_t = Question._meta.db_table, Membership._meta.db_table
    sql = f"""
        SELECT a.id, a.collection_id, a.title, a.body, c.slug, c.name,
               EXISTS (SELECT 1 FROM {question_t} q WHERE q.id = %s AND q.collection_id = a.collection_id),
               (SELECT m.role FROM {membership_t} m
                WHERE m.user_id = %s AND m.collection_id = a.collection_id LIMIT 1)
        FROM {answer_t} a JOIN {collection_t} c ON c.id = a.collection_id
        WHERE a.id = %s AND c.slug = %s
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, [question_id, user_id, answer_id, slug])
        row = cursor.fetchone()
    if row is None:
        return None
    a_id, collection_id, title, body, c_slug, c_name, question_here, member_role = row
    collection = _partial(Collection, id=collection_id, slug=c_slug, name=c_name)
    answer = _partial(Answer, id=a_id, collection_id=collection_id, title=title, body=body)
    answer.collection = collection
    question = _partial(Question, id=question_id, collection_id=collection_id)
    question.collection = collection
    return RatingTarget(collection, question, answer, bool(question_here), member_role)


def _partial(model: type[_M], **values: object) -> _M:
    """An instance loaded with some fields (``Model.from_db`` wants them in the model's field order)."""
    names = [f.attname for f in model._meta.concrete_fields if f.attname in values]
    return model.from_db(connection.alias, names, [values[name] for name in names])


@dataclass(frozen=True)
class JudgeReply:
    """A judge's rating of one answer, with its raw reply (and any reasoning in it)."""

    answer_external_id: str
    answer_title: str
    judge: str
    stars: int
    reply: str
    counts: bool


def judge_replies(*, question_id: int) -> list[JudgeReply]:
    """The judges' ratings of a question's answers (answer id, then judge name), for its question page."""
    rows = (
        Rating.objects.filter(question_id=question_id, source=RatingSource.JUDGE)
        .select_related("answer", "rater__judge_account")
        .order_by("answer__external_id", "rater__first_name")
    )
    return [
        JudgeReply(
            r.answer.external_id,
            r.answer.title,
            r.rater.first_name or r.rater.username,
            r.stars,
            r.reply,
            bool(getattr(r.rater, "judge_account", None) and r.rater.judge_account.counts),
        )
        for r in rows
    ]


@dataclass(frozen=True)
class RaterNote:
    answer_id: int
    answer_external_id: str
    answer_title: str
    rater: str
    stars: int
    note: str


def notes_for_question(*, question: Question) -> list[RaterNote]:
    """The notes raters left on their ratings of the question's answers, by answer then rater."""
    rows = (
        Rating.objects.filter(question=question)
        .exclude(note="")
        .order_by("answer__external_id", "rater__username")
        .values_list("answer_id", "answer__external_id", "answer__title", "rater__username", "stars", "note")
    )
    return [RaterNote(*row) for row in rows]
