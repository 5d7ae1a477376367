"""GET/POST /api/collections/{slug}/questions/ (bulk upsert by external id)."""

from __future__ import annotations

import pytest

from corpus.models import Question
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db
URL = "/api/collections/tiny/questions/"


def test_api_questions_list(api_data, caller):
    body = caller("rater").get(URL).json()

    assert [(q["id"], q["text"], q["split"]) for q in body["results"]] == [
        ("q1", "boundary layer", "train"),
        ("q2", "shock waves", "test"),
    ]
    assert [q["id"] for q in caller("rater").get(URL + "?split=test").json()["results"]] == ["q2"]


def test_api_questions_list_bad_split_is_400(api_data, caller):
    response = caller("rater").get(URL + "?split=dev")

    assert (response.status_code, response.json()) == (
        400,
        {"split": ["split must be train or test, not 'dev'."]},
    )


def test_api_questions_upsert_list_creates_updates_and_keeps(api_data, caller):
    body = [
        {"id": "q1", "text": "boundary layer"},  # unchanged
        {"id": "q2", "text": "shock waves behind a wedge"},  # text changed, split kept
        {"id": "q3", "text": "heat transfer", "split": "test"},
    ]

    response = caller("trainer_token").post(URL, body, format="json")

    assert (response.status_code, response.json()) == (200, {"created": 1, "updated": 1, "unchanged": 1})
    rows = Question.objects.filter(collection=api_data.collection).order_by("external_id")
    assert [(q.external_id, q.text, q.split) for q in rows] == [
        ("q1", "boundary layer", "train"),
        ("q2", "shock waves behind a wedge", "test"),
        ("q3", "heat transfer", "test"),
    ]


def test_api_questions_upsert_single_object(api_data, caller):
    response = caller("trainer").post(URL, {"id": "q7", "text": "wing flutter"}, format="json")

    assert response.json() == {"created": 1, "updated": 0, "unchanged": 0}
    assert Question.objects.get(external_id="q7").split in {"train", "test"}


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ([{"id": "q8", "text": "ok"}, {"text": "no id"}], {"1": {"id": ["This field is required."]}}),
        ([{"id": "q8", "text": ""}], {"0": {"text": ["This field may not be blank."]}}),
        ([{"id": "q8", "text": "x", "split": "dev"}], {"0": {"split": ['"dev" is not a valid choice.']}}),
        (
            [{"id": "x" * 201, "text": "x"}],
            {"0": {"id": ["Ensure this field has no more than 200 characters."]}},
        ),
        (
            [{"id": "q8", "text": "a"}, {"id": "q8", "text": "b"}],
            {"1": {"id": ["question 'q8' appears twice (also item 0)."]}},
        ),
        ([], {"non_field_errors": ["Send at least one question."]}),
        ("q8", {"non_field_errors": ["Send a question object or a list of them."]}),
        ([5], {"0": {"non_field_errors": ["Invalid data. Expected a dictionary, but got int."]}}),
    ],
)
def test_api_questions_upsert_invalid_stores_nothing(api_data, caller, body, errors):
    response = caller("trainer").post(URL, body, format="json")

    assert (response.status_code, response.json()) == (400, errors)
    assert not Question.objects.filter(external_id="q8").exists()
