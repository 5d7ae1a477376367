"""export_ratings: every rating with rater and note, CSV or JSONL."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Answer, Question, Split
from corpus.services import answers_upsert, questions_upsert
from ratings.services import rating_record

pytestmark = pytest.mark.django_db


@pytest.fixture
def rated(collection, rater):
    answers_upsert(
        collection=collection, records=[AnswerRecord("a1", "Wing", ""), AnswerRecord("a2", "Tail", "")]
    )
    questions_upsert(collection=collection, records=[QuestionRecord("q1", "wing lift, please", Split.TRAIN)])
    q1 = Question.objects.get(external_id="q1")
    for answer, stars, note in (("a1", 3, ""), ("a2", 0, 'about a "different" aircraft')):
        rating_record(
            rater=rater, question=q1, answer=Answer.objects.get(external_id=answer), stars=stars, note=note
        )


def test_export_ratings_csv_quotes_notes(rated, tmp_path):
    path = tmp_path / "ratings.csv"

    call_command("export_ratings", "tiny", "-o", str(path))

    rows = list(csv.DictReader(path.open(encoding="utf-8")))
    assert [
        (r["question"], r["answer_id"], r["rater"], r["stars"], r["source"], r["note"]) for r in rows
    ] == [
        ("wing lift, please", "a1", "rita", "3", "web", ""),
        ("wing lift, please", "a2", "rita", "0", "web", 'about a "different" aircraft'),
    ]


def test_export_ratings_jsonl_to_stdout(rated):
    out = io.StringIO()

    call_command("export_ratings", "tiny", "--format", "jsonl", stdout=out)

    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(r["answer_id"], r["stars"], r["note"]) for r in lines] == [
        ("a1", 3, ""),
        ("a2", 0, 'about a "different" aircraft'),
    ]


def test_export_ratings_unknown_collection(db):
    with pytest.raises(CommandError, match="no collection with slug 'nope'"):
        call_command("export_ratings", "nope")
