"""The file endpoints: a run's files, the ratings export with notes (imports: test_api_imports.py)."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from corpus.models import Answer, Question
from ratings.services import rating_note_set
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data"
CALLERS = ["anonymous", "rater", "trainer", "rater_token", "trainer_token", "other_token"]


@pytest.mark.parametrize("who", CALLERS)
@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ("run_export", (401, 403, 200, 403, 200, 404)),
        ("ratings_export", (401, 403, 200, 403, 200, 404)),
    ],
)
def test_api_files_authz(api_data, caller, endpoint, expected, who):
    client = caller(who)

    if endpoint == "run_export":
        response = client.get(f"/api/evaluations/{api_data.run.pk}/export/?format=csv")
    else:
        response = client.get("/api/collections/tiny/ratings/export/")

    assert response.status_code == expected[CALLERS.index(who)], response.content[:300]
    if response.status_code in {401, 403, 404}:
        assert set(response.json()) == {"detail"}


def test_api_run_export_unknown_format_is_400(api_data, caller):
    response = caller("trainer").get(f"/api/evaluations/{api_data.run.pk}/export/?format=xml")

    assert (response.status_code, response.json()) == (
        400,
        {"format": ["format must be trec-run, csv or jsonl, not 'xml'."]},
    )


def test_api_ratings_export_carries_notes(api_data, caller, rater):
    q1 = Question.objects.get(external_id="q1")
    rating_note_set(
        rater=rater,
        question=q1,
        answer=Answer.objects.get(external_id="a2"),
        note="about a different aircraft",
    )
    client = caller("trainer")

    as_csv = client.get("/api/collections/tiny/ratings/export/?format=csv&split=train")
    as_jsonl = client.get("/api/collections/tiny/ratings/export/?format=jsonl")

    assert as_csv.status_code == 200 and as_csv["Content-Type"] == "text/csv; charset=utf-8"
    rows = list(csv.DictReader(io.StringIO(as_csv.content.decode())))
    assert [(r["question_id"], r["answer_id"], r["rater"], r["stars"], r["note"]) for r in rows] == [
        ("q1", "a1", "rita", "3", ""),
        ("q1", "a2", "rita", "0", "about a different aircraft"),
    ]
    lines = [json.loads(line) for line in as_jsonl.content.decode().splitlines()]
    assert [(r["question_id"], r["answer_id"], r["note"]) for r in lines] == [
        ("q1", "a1", ""),
        ("q1", "a2", "about a different aircraft"),
        ("q2", "a2", ""),
    ]
    assert client.get("/api/collections/tiny/ratings/export/?format=xml&split=none").json() == {
        "format": ["format must be csv or jsonl, not 'xml'."],
        "split": ["split must be train, test or all, not 'none'."],
    }
