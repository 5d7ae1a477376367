"""GET/POST /api/collections/ and GET /api/collections/{slug}/."""

from __future__ import annotations

import pytest

from corpus.models import Collection, Membership, Role
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db


def test_api_collections_list_shows_role_and_counts(api_data, caller):
    body = caller("rater").get("/api/collections/").json()

    assert body["count"] == 1
    tiny = body["results"][0]
    assert {
        k: tiny[k] for k in ("slug", "name", "role", "ndcg_k", "accuracy_k", "gain_scheme", "discount")
    } == {
        "slug": "tiny",
        "name": "Tiny",
        "role": "rater",
        "ndcg_k": 10,
        "accuracy_k": 5,
        "gain_scheme": "linear",
        "discount": "log2",
    }
    assert (
        tiny["answer_count"],
        tiny["train_question_count"],
        tiny["test_question_count"],
        tiny["label_count"],
    ) == (
        3,
        1,
        1,
        3,
    )


def test_api_collections_list_is_paginated(caller, trainer):
    from corpus.services import collection_create

    for n in range(3):
        collection_create(name=f"C{n}", slug=f"c{n}", created_by=trainer)

    client = caller("trainer")
    body = client.get("/api/collections/?page=1").json()
    beyond = client.get("/api/collections/?page=2")

    assert (body["count"], body["next"], len(body["results"])) == (4, None, 4)
    assert (beyond.status_code, beyond.json()) == (404, {"detail": "Invalid page."})


def test_api_collection_create_makes_caller_trainer(caller, trainer):
    response = caller("trainer").post(
        "/api/collections/", {"name": "Aero notes", "ndcg_k": 5, "gain_scheme": "exponential"}, format="json"
    )

    assert response.status_code == 201
    assert response.json()["slug"] == "aero-notes"
    assert response.json()["role"] == "trainer"
    collection = Collection.objects.get(slug="aero-notes")
    assert (collection.ndcg_k, collection.gain_scheme) == (5, "exponential")
    assert Membership.objects.get(collection=collection, user=trainer).role == Role.TRAINER


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        ({}, {"name": ["This field is required."]}),
        ({"name": "  "}, {"name": ["This field may not be blank."]}),
        ({"name": "X", "ndcg_k": 0}, {"ndcg_k": ["Ensure this value is greater than or equal to 1."]}),
        ({"name": "X", "gain_scheme": "cubic"}, {"gain_scheme": ['"cubic" is not a valid choice.']}),
        ({"name": "X", "slug": "tiny"}, {"slug": ["A collection with slug 'tiny' already exists."]}),
        (
            {"name": "X", "slug": "not a slug"},
            {"slug": ['Enter a valid "slug" consisting of letters, numbers, underscores or hyphens.']},
        ),
    ],
)
def test_api_collection_create_invalid_names_the_field(caller, body, errors):
    response = caller("trainer").post("/api/collections/", body, format="json")

    assert (response.status_code, response.json()) == (400, errors)


def test_api_collection_create_name_without_slug_characters_is_400(caller):
    response = caller("trainer").post("/api/collections/", {"name": "!!!"}, format="json")

    assert response.status_code == 400
    assert list(response.json()) == ["slug"]


def test_api_collection_detail(api_data, caller):
    body = caller("trainer_token").get("/api/collections/tiny/").json()

    assert (body["slug"], body["role"], body["answer_count"]) == ("tiny", "trainer", 3)


def test_api_collection_detail_unknown_is_404(caller):
    response = caller("trainer").get("/api/collections/nope/")

    assert (response.status_code, response.json()) == (
        404,
        {"detail": "No collection 'nope' that you can see."},
    )
