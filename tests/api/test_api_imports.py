"""Imports through the API: files (multipart, all or nothing) and the imports of judgments kept with their
option "answers not listed for a judged question are incorrect", listed, read and changed."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from corpus.formats.common import question_id_from_text
from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord
from corpus.models import Question, Split
from ratings.models import GroundTruthImport, Rating
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from trainer.services import collection_import

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "rater", "trainer", "rater_token", "trainer_token", "other_token"]


def upload(name: str, text: str) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, text.encode(), content_type="text/plain")


def quepid_body() -> dict:
    return {
        "quepid_csv": upload("ratings.csv", "query,docid,rating\nboundary layer,a2,2\nnew question,a3,3\n")
    }


def _expected(record: GroundTruthImport, *, questions: int, training: int, by: str | None = "tom") -> dict:
    return {
        "id": record.pk,
        "name": f"import {record.pk} ({record.files})" if record.files else f"import {record.pk}",
        "files": record.files,
        "created_at": record.created_at.isoformat().replace("+00:00", "Z"),
        "created_by": by,
        "rater": "ground-truth",
        "judgments": record.judgments,
        "questions": questions,
        "training_questions": training,
        "unlisted_incorrect": record.unlisted_incorrect,
    }


def _imported(collection, *, unlisted_incorrect: bool = False) -> GroundTruthImport:
    """q1 (train) and q2 (test) judged by a qrels file."""
    summary = collection_import(
        collection=collection,
        answers=[AnswerRecord(a, a, a) for a in ("a1", "a2", "a3")],
        questions=[
            QuestionRecord("q1", "boundary layer", Split.TRAIN),
            QuestionRecord("q2", "shock waves", Split.TEST),
        ],
        judgments=[
            JudgmentRecord("q1", "a1", 3),
            JudgmentRecord("q1", "a3", 1),
            JudgmentRecord("q2", "a2", 2),
        ],
        unlisted_incorrect=unlisted_incorrect,
        files=["qrels.txt"],
    )
    assert summary.ground_truth_import is not None
    return summary.ground_truth_import


@pytest.mark.parametrize("who", CALLERS)
@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ("upload", (401, 403, 200, 403, 200, 404)),
        ("change", (401, 403, 200, 403, 200, 404)),
    ],
)
def test_api_imports_authz(api_data, caller, endpoint, expected, who):
    record = _imported(api_data.collection)
    client = caller(who)
    url = f"/api/collections/tiny/imports/{record.pk}/"

    if endpoint == "upload":
        response = client.post("/api/collections/tiny/imports/", quepid_body(), format="multipart")
    else:
        response = client.patch(url, {"unlisted_incorrect": True}, format="json")

    assert response.status_code == expected[CALLERS.index(who)], response.content[:300]
    if response.status_code in {401, 403, 404}:
        assert set(response.json()) == {"detail"}
    record.refresh_from_db()
    # Only a trainer of the collection changes the option.
    assert record.unlisted_incorrect is (endpoint == "change" and expected[CALLERS.index(who)] == 200)


def test_api_imports_reads_are_for_the_collections_trainers(api_data, caller):
    record = _imported(api_data.collection)
    urls = ("/api/collections/tiny/imports/", f"/api/collections/tiny/imports/{record.pk}/")

    statuses = {who: [caller(who).get(url).status_code for url in urls] for who in CALLERS}

    assert statuses == {
        "anonymous": [401, 401],
        "rater": [403, 403],
        "trainer": [200, 200],
        "rater_token": [403, 403],
        "trainer_token": [200, 200],
        "other_token": [404, 404],
    }


def test_api_import_of_another_collection_is_404_and_unchanged(api_data, caller, other_collection):
    record = _imported(other_collection)

    response = caller("trainer").patch(
        f"/api/collections/tiny/imports/{record.pk}/", {"unlisted_incorrect": True}, format="json"
    )

    assert (response.status_code, response.json()) == (
        404,
        {"detail": f"No import {record.pk} in collection 'tiny'."},
    )
    record.refresh_from_db()
    assert record.unlisted_incorrect is False


def test_api_import_option_change_turns_it_on_and_off(api_data, caller):
    record = _imported(api_data.collection)
    client = caller("trainer_token")
    url = f"/api/collections/tiny/imports/{record.pk}/"

    on = client.patch(url, {"unlisted_incorrect": True}, format="json")
    listed = client.get("/api/collections/tiny/imports/")
    off = client.patch(url, {"unlisted_incorrect": False}, format="json")

    record.refresh_from_db()
    expected = _expected(record, questions=2, training=1, by=None)
    assert (on.status_code, on.json()) == (200, {**expected, "unlisted_incorrect": True})
    assert listed.json() == [{**expected, "unlisted_incorrect": True}]
    assert (off.status_code, off.json()) == (200, {**expected, "unlisted_incorrect": False})
    assert record.name == f"import {record.pk} (qrels.txt)"


def test_api_import_option_change_without_a_boolean_is_400_naming_the_field(api_data, caller):
    record = _imported(api_data.collection)
    client = caller("trainer")
    url = f"/api/collections/tiny/imports/{record.pk}/"

    missing = client.patch(url, {}, format="json")
    bad = client.patch(url, {"unlisted_incorrect": "maybe"}, format="json")

    assert (missing.status_code, missing.json()) == (400, {"unlisted_incorrect": ["This field is required."]})
    assert (bad.status_code, bad.json()) == (400, {"unlisted_incorrect": ["Must be a valid boolean."]})


def test_api_import_upload_unlisted_incorrect_defaults_on_and_can_be_off(api_data, caller):
    client = caller("trainer")

    default = client.post("/api/collections/tiny/imports/", quepid_body(), format="multipart")
    off = client.post(
        "/api/collections/tiny/imports/", {**quepid_body(), "unlisted_incorrect": "false"}, format="multipart"
    )
    bad = client.post(
        "/api/collections/tiny/imports/",
        {**quepid_body(), "unlisted_incorrect": "perhaps"},
        format="multipart",
    )

    assert (
        default.json()["ground_truth_import"]["unlisted_incorrect"],
        off.json()["ground_truth_import"]["unlisted_incorrect"],
    ) == (True, False)
    assert (bad.status_code, bad.json()) == (400, {"unlisted_incorrect": ["Must be a valid boolean."]})
    assert list(GroundTruthImport.objects.values_list("unlisted_incorrect", "files", "judgments")) == [
        (True, "ratings.csv", 2),
        (False, "ratings.csv", 2),
    ]


def test_api_import_answers_only_keeps_no_import(api_data, caller):
    body = {"corpus": upload("corpus.jsonl", '{"_id": "a9", "title": "Lift", "text": "Wing lift."}\n')}

    response = caller("trainer").post("/api/collections/tiny/imports/", body, format="multipart")

    assert response.status_code == 200, response.content
    assert response.json()["ground_truth_import"] is None
    assert GroundTruthImport.objects.count() == 0


def test_api_import_quepid_records_ratings(api_data, caller):
    response = caller("trainer").post("/api/collections/tiny/imports/", quepid_body(), format="multipart")

    assert response.status_code == 200
    assert response.json() == {
        "answers": {"created": 0, "updated": 0, "unchanged": 0},
        "questions": {"created": 2, "updated": 0, "unchanged": 0},
        "ratings": {"created": 2, "updated": 0, "unchanged": 0},
        "summary": "answers: 0 new, 0 updated, 0 unchanged; questions: 2 new, 0 updated, 0 unchanged; "
        "ratings: 2 new, 0 updated, 0 unchanged",
        "ground_truth_import": _expected(GroundTruthImport.objects.get(), questions=2, training=1),
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
