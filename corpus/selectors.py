"""Reads of the corpus."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.contrib.auth.models import AnonymousUser, User
from django.db import connection
from django.db.models import QuerySet

from corpus.models import Answer, Collection, Question, Split


def collections_for_user(*, user: User | AnonymousUser) -> QuerySet[Collection]:
    """Collections the user may see: all for a superuser, else those they are a member of."""
    if not user.is_authenticated:
        return Collection.objects.none()
    if user.is_superuser:
        return Collection.objects.all()
    return Collection.objects.filter(memberships__user=user).distinct()


def test_questions(*, collection: Collection) -> QuerySet[Question]:
    return Question.objects.filter(collection=collection, split=Split.TEST).order_by("id")


def questions_and_answers(
    *, collection: Collection, question_ids: Iterable[str], answer_ids: Iterable[str]
) -> tuple[dict[str, Question], dict[str, Answer]]:
    """The collection's questions and answers with these external ids, by external id, in one statement.

    For the API's rating save (one request per rating a service posts): one round trip instead of two, and
    no queryset to build. Only the id, the collection, the external id and a question's split are loaded;
    any other field loads on first use (an answer's body can be 100 KB).
    """
    question_ids, answer_ids = list(dict.fromkeys(question_ids)), list(dict.fromkeys(answer_ids))
    if not question_ids and not answer_ids:
        return {}, {}
    q_marks, a_marks = ", ".join(["%s"] * len(question_ids)), ", ".join(["%s"] * len(answer_ids))
    parts: list[str] = []
    params: list[Any] = []
    if question_ids:
        parts.append(
            f"SELECT 'q', id, external_id, split FROM {Question._meta.db_table} "
            f"WHERE collection_id = %s AND external_id IN ({q_marks})"
        )
        params += [collection.pk, *question_ids]
    if answer_ids:
        parts.append(
            f"SELECT 'a', id, external_id, NULL FROM {Answer._meta.db_table} "
            f"WHERE collection_id = %s AND external_id IN ({a_marks})"
        )
        params += [collection.pk, *answer_ids]
    questions: dict[str, Question] = {}
    answers: dict[str, Answer] = {}
    with connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(parts), params)
        rows = cursor.fetchall()
    for kind, pk, external_id, split in rows:
        if kind == "q":
            question = Question.from_db(
                connection.alias,
                ["id", "collection_id", "external_id", "split"],
                [pk, collection.pk, external_id, split],
            )
            question.collection = collection
            questions[external_id] = question
        else:
            answer = Answer.from_db(
                connection.alias, ["id", "collection_id", "external_id"], [pk, collection.pk, external_id]
            )
            answer.collection = collection
            answers[external_id] = answer
    return questions, answers
