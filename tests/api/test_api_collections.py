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


@pytest.mark.parametrize("kind", ["trainer_token", "other_token"])
def test_api_collection_create_with_a_trainer_token_makes_its_user_trainer(caller, trainer, outsider, kind):
    response = caller(kind).post("/api/collections/", {"name": "Aero notes"}, format="json")

    assert (response.status_code, response.json()["slug"], response.json()["role"]) == (
        201,
        "aero-notes",
        "trainer",
    )
    user = trainer if kind == "trainer_token" else outsider
    assert list(Membership.objects.filter(collection__slug="aero-notes").values_list("user", "role")) == [
        (user.pk, Role.TRAINER)
    ]


def test_api_collection_create_with_a_rater_token_is_403_naming_why(caller):
    response = caller("rater_token").post("/api/collections/", {"name": "Aero notes"}, format="json")

    assert (response.status_code, response.json()) == (
        403,
        {
            "detail": "This token has the rater role in collection 'tiny'; only a trainer token (or a "
            "signed-in trainer or staff member) may create collections."
        },
    )
    assert not Collection.objects.filter(slug="aero-notes").exists()


def test_api_collection_create_with_a_trainer_token_of_a_user_now_rater_is_403(caller, trainer, collection):
    client = caller("trainer_token")
    Membership.objects.filter(user=trainer, collection=collection).update(role=Role.RATER)

    response = client.post("/api/collections/", {"name": "Aero notes"}, format="json")

    assert response.status_code == 403
    assert response.json()["detail"].startswith("This token has the rater role in collection 'tiny';")


def test_api_collection_create_anonymous_is_401(caller):
    response = caller("anonymous").post("/api/collections/", {"name": "Aero notes"}, format="json")

    assert (response.status_code, response["WWW-Authenticate"]) == (401, "Token")
    assert not Collection.objects.filter(slug="aero-notes").exists()


def test_api_collection_create_the_new_collection_is_not_the_tokens(caller):
    client = caller("trainer_token")
    client.post("/api/collections/", {"name": "Aero notes"}, format="json")

    response = client.get("/api/collections/aero-notes/")

    assert (response.status_code, response.json()) == (
        404,
        {"detail": "No collection 'aero-notes' here that you can see."},
    )
