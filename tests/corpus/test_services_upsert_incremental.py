"""corpus.services.answers_upsert / questions_upsert and the import's judgments read only the rows an
import names, never every row of the collection (issue 37: 1,000 answers into a collection of a million
read the million)."""

from __future__ import annotations

import pytest
from django.db import connection

from corpus import services
from corpus.formats.common import FormatError
from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord
from corpus.models import Answer, Question
from corpus.services import answers_upsert, questions_upsert
from trainer.services import collection_import

pytestmark = pytest.mark.django_db


class RowsRead:
    """Counts the rows SELECTs on a table return, through Django's execute wrapper."""

    def __init__(self, table: str) -> None:
        self.table, self.rows = table, 0

    def __call__(self, execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if sql.lstrip().upper().startswith("SELECT") and f'FROM "{self.table}"' in sql:
            self.rows += context["cursor"].rowcount
        return result


def _answers(n: int, prefix: str = "a") -> list[AnswerRecord]:
    return [AnswerRecord(f"{prefix}{i}", f"Title {i}", f"body {i}") for i in range(n)]


def test_answers_upsert_into_a_large_collection_reads_only_the_named_answers(collection):
    answers_upsert(collection=collection, records=_answers(300))
    records = [AnswerRecord("a7", "Title 7", "body 7"), AnswerRecord("a8", "New", "b"), *_answers(3, "n")]
    read = RowsRead("corpus_answer")
    with connection.execute_wrapper(read):
        summary = answers_upsert(collection=collection, records=records)
    assert (read.rows, summary.created, summary.updated, summary.unchanged) == (2, 3, 1, 1)
    assert Answer.objects.filter(collection=collection).count() == 303
    assert Answer.objects.get(collection=collection, external_id="a8").title == "New"


def test_answers_upsert_in_lookup_chunks_finds_every_existing_answer(collection, monkeypatch):
    answers_upsert(collection=collection, records=_answers(7))
    monkeypatch.setattr(services, "LOOKUP_CHUNK", 3)
    summary = answers_upsert(collection=collection, records=_answers(9))
    assert (summary.created, summary.updated, summary.unchanged) == (2, 0, 7)


def test_questions_upsert_into_a_large_collection_reads_only_the_named_questions(collection):
    questions_upsert(
        collection=collection, records=[QuestionRecord(f"q{i}", f"text {i}") for i in range(200)]
    )
    read = RowsRead("corpus_question")
    with connection.execute_wrapper(read):
        summary = questions_upsert(
            collection=collection, records=[QuestionRecord("q3", "changed"), QuestionRecord("q900", "new")]
        )
    assert (read.rows, summary.created, summary.updated, summary.unchanged) == (1, 1, 1, 0)
    assert Question.objects.filter(collection=collection).count() == 201


def test_collection_import_judgments_read_only_the_named_answers(collection):
    collection_import(
        collection=collection, answers=_answers(250), questions=[QuestionRecord("q1", "what lifts")]
    )
    read = RowsRead("corpus_answer")
    with connection.execute_wrapper(read):
        summary = collection_import(
            collection=collection,
            answers=[AnswerRecord("z1", "Zed", "zed")],
            judgments=[
                JudgmentRecord("q1", "z1", 3, "gt.json", 1),
                JudgmentRecord("q1", "a5", 2, "gt.json", 2),
            ],
        )
    # one row for the upsert's lookup (none exist: 0) and two for the judgments' ids
    assert (read.rows, summary.answers.created, summary.ratings_created) == (2, 1, 2)


def test_collection_import_judgment_of_an_unknown_answer_names_its_line_and_writes_nothing(collection):
    collection_import(collection=collection, answers=_answers(5), questions=[QuestionRecord("q1", "what")])
    with pytest.raises(FormatError) as error:
        collection_import(
            collection=collection,
            answers=[AnswerRecord("new1", "New", "new")],
            judgments=[
                JudgmentRecord("q1", "a1", 3, "gt.json", 1),
                JudgmentRecord("q1", "gone", 2, "gt.json", 2),
            ],
        )
    assert str(error.value) == "gt.json line 2: answer id gone not in collection tiny"
    assert not Answer.objects.filter(collection=collection, external_id="new1").exists()
