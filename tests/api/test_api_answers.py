"""GET/POST /api/collections/{slug}/answers/ (bulk upsert by external id)."""

from __future__ import annotations

import pytest

from corpus.models import Answer
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db
URL = "/api/collections/tiny/answers/"


def test_api_answers_list(api_data, caller):
    body = caller("rater_token").get(URL).json()

    assert body["count"] == 3
    assert body["results"][0] == {
        **body["results"][0],
        "id": "a1",
        "title": "Boundary layer",
        "body": "The boundary layer of a flat plate.",
        "metadata": {},
    }


def test_api_answers_upsert_bulk(api_data, caller):
    body = [
        {"id": "a1", "title": "Boundary layer", "body": "The boundary layer of a flat plate."},
        {"id": "a2", "title": "Shock waves", "body": "Oblique shock waves.", "metadata": {"year": 1962}},
        {"id": "a4", "body": "Untitled answer"},
    ]

    response = caller("trainer").post(URL, body, format="json")

    assert (response.status_code, response.json()) == (200, {"created": 1, "updated": 1, "unchanged": 1})
    a2, a4 = Answer.objects.get(external_id="a2"), Answer.objects.get(external_id="a4")
    assert (a2.body, a2.metadata) == ("Oblique shock waves.", {"year": 1962})
    assert (a4.title, a4.body) == ("", "Untitled answer")


def test_api_answers_upsert_invalid_item_stores_nothing(api_data, caller):
    body = [{"id": "a5", "title": "ok"}, {"id": "a6", "metadata": "not an object"}]

    response = caller("trainer").post(URL, body, format="json")

    assert (response.status_code, response.json()) == (
        400,
        {"1": {"metadata": ['Expected a dictionary of items but got type "str".']}},
    )
    assert not Answer.objects.filter(external_id__in=["a5", "a6"]).exists()


def test_api_answers_metadata_holds_scalars_or_lists_of_them_as_the_schema_says(api_data, caller):
    body = [
        {"id": "a7", "metadata": {"year": 1962, "tags": ["flow", "shock"], "note": None, "ok": True}},
        {"id": "a8", "metadata": {"author": {"name": "nested"}}},
    ]

    response = caller("trainer").post(URL, body, format="json")

    assert (response.status_code, response.json()) == (
        400,
        {
            "1": {
                "metadata": [
                    "metadata 'author' must be a string, number, boolean or null, or a list of those."
                ]
            }
        },
    )
    assert not Answer.objects.filter(external_id__in=["a7", "a8"]).exists()
    assert caller("trainer").post(URL, body[:1], format="json").status_code == 200
    assert Answer.objects.get(external_id="a7").metadata == body[0]["metadata"]
