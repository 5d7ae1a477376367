"""The file endpoints: imports (multipart, all or nothing), a run's files, the ratings export with notes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from corpus.formats.common import question_id_from_text
from corpus.models import Answer, Question
from ratings.models import Rating
from ratings.services import rating_note_set
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parents[1] / "data"
CALLERS = ["anonymous", "rater", "trainer", "rater_token", "trainer_token", "other_token"]


def upload(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/plain")


def quepid_body() -> dict:
    return {
        "quepid_csv": upload("ratings.csv", "query,docid,rating\nboundary layer,a2,2\nnew question,a3,3\n")
    }


@pytest.mark.parametrize("who", CALLERS)
@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ("import", (401, 403, 200, 403, 200, 404)),
        ("run_export", (401, 403, 200, 403, 200, 404)),
        ("ratings_export", (401, 403, 200, 403, 200, 404)),
    ],
)
def test_api_files_authz(api_data, caller, endpoint, expected, who):
    client = caller(who)

    if endpoint == "import":
        response = client.post("/api/collections/tiny/imports/", quepid_body(), format="multipart")
    elif endpoint == "run_export":
        response = client.get(f"/api/evaluations/{api_data.run.pk}/export/?format=csv")
    else:
        response = client.get("/api/collections/tiny/ratings/export/")

    assert response.status_code == expected[CALLERS.index(who)], response.content[:300]
    if response.status_code in {401, 403, 404}:
        assert set(response.json()) == {"detail"}


def test_api_import_quepid_records_ratings(api_data, caller):
    response = caller("trainer").post("/api/collections/tiny/imports/", quepid_body(), format="multipart")

    assert response.status_code == 200
    assert response.json() == {
        "answers": {"created": 0, "updated": 0, "unchanged": 0},
        "questions": {"created": 2, "updated": 0, "unchanged": 0},
        "ratings": {"created": 2, "updated": 0, "unchanged": 0},
        "summary": "answers: 0 new, 0 updated, 0 unchanged; questions: 2 new, 0 updated, 0 unchanged; "
        "ratings: 2 new, 0 updated, 0 unchanged",
    }
    imported = Question.objects.get(external_id=question_id_from_text("new question"))
    assert Rating.objects.get(question=imported, rater__username="ground-truth").stars == 3


def test_api_import_rre_with_grade_map(api_data, caller):
    rre = '{"query_groups": [{"queries": [{"placeholders": {"$query": "wing flutter"}}], "relevant_documents": {"4": ["a1"]}}]}'

    response = caller("trainer").post(
        "/api/collections/tiny/imports/",
        {"rre_json": upload("rre.json", rre), "grade_map": "4:3,0:0"},
        format="multipart",
    )

    assert response.status_code == 200
    assert Rating.objects.get(question__text="wing flutter").stars == 3


def test_api_import_bad_file_names_field_file_line_and_imports_nothing(api_data, caller):
    before = (Question.objects.count(), Rating.objects.count())
    body = {
        "quepid_csv": upload("good.csv", "query,docid,rating\nfresh question,a1,2\n"),
        "rre_json": upload(
            "bad.json",
            '{"query_groups": [{"queries": [{"placeholders": {"$query": "x"}}],\n "relevant_documents": {"3": ["a404"]}}]}',
        ),
    }

    response = caller("trainer").post("/api/collections/tiny/imports/", body, format="multipart")

    assert response.status_code == 400
    assert response.json() == {
        "rre_json": ["bad.json line 2: answer id a404 not in collection tiny. Nothing was imported."]
    }
    assert (Question.objects.count(), Rating.objects.count()) == before


def test_api_import_without_files_or_with_bad_grade_map_is_400(api_data, caller):
    client = caller("trainer")

    empty = client.post("/api/collections/tiny/imports/", {"grade_map": "identity"}, format="multipart")
    bad_map = client.post(
        "/api/collections/tiny/imports/", {**quepid_body(), "grade_map": "3=2"}, format="multipart"
    )

    assert (empty.status_code, empty.json()) == (
        400,
        {"non_field_errors": ["Choose at least one file to import."]},
    )
    assert bad_map.status_code == 400
    assert bad_map.json() == {
        "grade_map": ["grade map '3=2': '3=2' is not GRADE:STARS. Nothing was imported."]
    }


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
