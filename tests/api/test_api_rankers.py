"""GET/POST /api/rankers/ and GET /api/rankers/{id}/."""

from __future__ import annotations

import pytest

from rankers.models import Ranker
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db


def test_api_rankers_list_masks_secrets(api_data, caller):
    body = caller("rater").get("/api/rankers/").json()

    assert [(r["name"], r["kind"], r["is_default"]) for r in body["results"]] == [
        ("Built-in", "builtin", True),
        ("Service", "http", False),
    ]
    service = body["results"][1]
    assert service["config"] == {
        "url": "http://127.0.0.1:9/",
        "timeout": 10.0,
        "retries": 2,
        "auth_header": "********",
    }
    assert [v["label"] for v in service["versions"]] == ["v1"]


def test_api_rankers_list_filters_by_collection(api_data, caller):
    client = caller("trainer")

    assert client.get("/api/rankers/?collection=tiny").json()["count"] == 2
    assert client.get("/api/rankers/?collection=other").json()["count"] == 0


def test_api_ranker_create_http(api_data, caller):
    body = {
        "collection": "tiny",
        "name": "My service",
        "kind": "http",
        "config": {"url": "http://127.0.0.1:8077/", "timeout": 5, "retries": 1},
        "is_default": True,
    }

    response = caller("trainer_token").post("/api/rankers/", body, format="json")

    assert response.status_code == 201
    created = Ranker.objects.get(pk=response.json()["id"])
    assert (created.name, created.config, created.is_default) == (
        "My service",
        {"url": "http://127.0.0.1:8077/", "timeout": 5, "retries": 1},
        True,
    )
    assert Ranker.objects.get(pk=api_data.builtin.pk).is_default is False


@pytest.mark.parametrize(
    ("body", "errors"),
    [
        (
            {"collection": "tiny", "name": "S", "kind": "http", "config": {"timeout": 0}},
            {
                "config": {
                    "url": ["url is required: the address the trainer POSTs questions to."],
                    "timeout": ["timeout must be a number of seconds above 0 and at most 120."],
                }
            },
        ),
        ({"collection": "tiny", "name": "S", "kind": "solr"}, {"kind": ['"solr" is not a valid choice.']}),
        (
            {"collection": "tiny", "name": "Service", "kind": "builtin"},
            {"name": ["This collection already has a ranker named 'Service'."]},
        ),
        (
            {"collection": "nope", "name": "S", "kind": "builtin"},
            {"collection": ["No collection 'nope' that you can see."]},
        ),
        (
            {"collection": "tiny", "name": "S", "kind": "builtin", "config": []},
            {"config": ['Expected a dictionary of items but got type "list".']},
        ),
    ],
)
def test_api_ranker_create_invalid_names_the_field(api_data, caller, body, errors):
    response = caller("trainer").post("/api/rankers/", body, format="json")

    assert (response.status_code, response.json()) == (400, errors)
    assert Ranker.objects.count() == 2


def test_api_ranker_detail(api_data, caller):
    body = caller("rater").get(f"/api/rankers/{api_data.ranker.pk}/").json()

    assert (body["id"], body["collection"], body["name"], body["versions"][0]["label"]) == (
        api_data.ranker.pk,
        "tiny",
        "Service",
        "v1",
    )


def test_api_ranker_detail_unknown_is_404(caller):
    assert caller("trainer").get("/api/rankers/999999/").status_code == 404
