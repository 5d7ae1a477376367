"""questions_and_answers: a collection's questions and answers by external id, in one statement."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Split
from corpus.selectors import questions_and_answers
from corpus.services import answers_upsert, collection_create, questions_upsert


def fill(collection, suffix: str = "") -> None:
    answers_upsert(
        collection=collection,
        records=[AnswerRecord(f"a{n}", f"Title {n}{suffix}", f"Body {n}{suffix}") for n in (1, 2)],
    )
    questions_upsert(
        collection=collection,
        records=[
            QuestionRecord("q1", f"first{suffix}", Split.TRAIN),
            QuestionRecord("q2", f"second{suffix}", Split.TEST),
        ],
    )


def test_questions_and_answers_found_by_external_id_in_one_query(collection, other_collection):
    fill(collection)
    fill(other_collection, " elsewhere")

    with CaptureQueriesContext(connection) as queries:
        questions, answers = questions_and_answers(
            collection=collection, question_ids=["q2", "q1", "q2"], answer_ids=["a2"]
        )

    assert len(queries) == 1
    assert {k: (q.pk, q.split, q.collection_id) for k, q in questions.items()} == {
        "q1": (collection.questions.get(external_id="q1").pk, "train", collection.pk),
        "q2": (collection.questions.get(external_id="q2").pk, "test", collection.pk),
    }
    assert {k: a.pk for k, a in answers.items()} == {"a2": collection.answers.get(external_id="a2").pk}
    # Fields not loaded come on first use, from this collection's row.
    assert (answers["a2"].body, questions["q1"].text) == ("Body 2", "first")


def test_questions_and_answers_unknown_or_other_collections_ids_left_out(collection, other_collection):
    fill(other_collection)

    assert questions_and_answers(collection=collection, question_ids=["q1", "nope"], answer_ids=["a1"]) == (
        {},
        {},
    )


def test_questions_and_answers_only_answers_asked(collection):
    fill(collection)

    questions, answers = questions_and_answers(collection=collection, question_ids=[], answer_ids=["a1"])

    assert (questions, list(answers)) == ({}, ["a1"])


def test_questions_and_answers_nothing_asked_no_query(db):
    collection = collection_create(name="Empty", slug="empty")

    with CaptureQueriesContext(connection) as queries:
        assert questions_and_answers(collection=collection, question_ids=[], answer_ids=[]) == ({}, {})

    assert len(queries) == 0
