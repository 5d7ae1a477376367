"""Engine rankers through the API: create, read, change the config (secrets stay masked), Try it, and who
may do each (anonymous, rater, trainer, their tokens, another collection's token)."""

from __future__ import annotations

import json

import pytest

from rankers.engine_config import ERROR_PATHS, MASK
from rankers.models import Ranker
from rankers.services import ranker_create
from tests.rankers.engine_support import BOUNDARY_LAYER, engine_fixture, es_config, solr_config  # noqa: F401
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers

pytestmark = pytest.mark.django_db

CALLERS = ["anonymous", "rater", "trainer", "rater_token", "trainer_token", "other_token"]
SECRET = "ApiKey c2VjcmV0LWtleQ=="


@pytest.fixture
def es_ranker(api_data, engine):
    return ranker_create(
        collection=api_data.collection,
        name="Elasticsearch",
        kind="engine",
        config=es_config(engine.url, auth_header=SECRET, request={"headers": {"X-Tenant": "tenant-secret"}}),
    )


@pytest.mark.parametrize("who", CALLERS)
@pytest.mark.parametrize(
    ("endpoint", "expected"),
    [
        ("patch", (401, 403, 200, 403, 200, 404)),
        ("try", (401, 403, 200, 403, 200, 404)),
        ("get", (401, 200, 200, 200, 200, 404)),
    ],
)
def test_api_engine_authz(caller, es_ranker, engine, who, endpoint, expected):
    client = caller(who)
    url = f"/api/rankers/{es_ranker.pk}/"
    if endpoint == "patch":
        response = client.patch(url, {"config": es_config(engine.url, timeout=3)}, format="json")
    elif endpoint == "try":
        response = client.post(f"{url}try/", {"question": "boundary layer"}, format="json")
    else:
        response = client.get(url)

    assert response.status_code == expected[CALLERS.index(who)], response.content[:300]
    if response.status_code in {401, 403, 404}:
        assert set(response.json()) == {"detail"}
    es_ranker.refresh_from_db()
    changed = endpoint == "patch" and response.status_code == 200
    assert es_ranker.config["timeout"] == (3 if changed else 10.0)
    if endpoint == "try" and response.status_code != 200:
        assert engine.requests == []  # refused callers never reach the engine


def test_api_engine_create_fills_the_preset_and_masks_secrets(caller, api_data, engine):
    response = caller("trainer").post(
        "/api/rankers/",
        {
            "collection": "tiny",
            "name": "Solr",
            "kind": "engine",
            "config": solr_config(engine.url, auth_header="Basic dXNlcjpwdw=="),
        },
        format="json",
    )

    assert response.status_code == 201, response.content
    config = response.json()["config"]
    assert config["preset"] == "solr"
    assert config["response"] == {
        "hits": "response.docs",
        "id": "id",
        "score": "score",
        "errors": ERROR_PATHS,
    }
    assert config["request"]["params"]["q"] == "{{question}}"
    assert config["auth_header"] == MASK
    assert "dXNlcjpwdw" not in response.content.decode()
    assert Ranker.objects.get(name="Solr").config["auth_header"] == "Basic dXNlcjpwdw=="


def test_api_engine_create_errors_name_the_config_field(caller, api_data, engine):
    config = es_config(engine.url, request={"body": {"query": {"match": {"text": "{{qestion}}"}}}})

    response = caller("trainer").post(
        "/api/rankers/",
        {"collection": "tiny", "name": "Bad", "kind": "engine", "config": config},
        format="json",
    )

    assert response.status_code == 400
    assert response.json() == {
        "config": {
            "request.body.query.match.text": [
                "request.body.query.match.text: unknown placeholder {{qestion}}; use {{question}} or {{rows}}."
            ]
        }
    }
    assert not Ranker.objects.filter(name="Bad").exists()


def test_api_engine_get_never_shows_secrets(caller, es_ranker):
    response = caller("trainer").get(f"/api/rankers/{es_ranker.pk}/")

    body = response.content.decode()
    assert "c2VjcmV0LWtleQ" not in body and "tenant-secret" not in body
    config = response.json()["config"]
    assert (config["auth_header"], config["request"]["headers"]) == (MASK, {"X-Tenant": MASK})


def test_api_engine_patch_with_masked_secrets_keeps_them(caller, es_ranker):
    client = caller("trainer")
    shown = client.get(f"/api/rankers/{es_ranker.pk}/").json()["config"]
    shown["response"]["id"] = "_source.title"

    response = client.patch(f"/api/rankers/{es_ranker.pk}/", {"config": shown}, format="json")

    assert response.status_code == 200, response.content
    assert response.json()["config"]["auth_header"] == MASK
    es_ranker.refresh_from_db()
    assert es_ranker.config["auth_header"] == SECRET
    assert es_ranker.config["request"]["headers"] == {"X-Tenant": "tenant-secret"}
    assert es_ranker.config["response"]["id"] == "_source.title"


def test_api_engine_patch_error_names_the_field_and_changes_nothing(caller, es_ranker):
    before = dict(es_ranker.config)

    response = caller("trainer").patch(
        f"/api/rankers/{es_ranker.pk}/",
        {"config": {"preset": "elasticsearch", "url": "http://127.0.0.1:1/", "response": {"score": ""}}},
        format="json",
    )

    assert response.status_code == 400
    assert list(response.json()["config"]) == ["response.score"]
    es_ranker.refresh_from_db()
    assert es_ranker.config == before


def test_api_engine_patch_needs_a_config_object(caller, es_ranker):
    response = caller("trainer").patch(f"/api/rankers/{es_ranker.pk}/", {"config": "x"}, format="json")

    assert response.status_code == 400
    assert list(response.json()) == ["config"]


def test_api_try_shows_the_mapped_result(caller, es_ranker, engine):
    response = caller("trainer_token").post(
        f"/api/rankers/{es_ranker.pk}/try/", {"question": "boundary layer", "rows": 5}, format="json"
    )

    assert response.status_code == 200
    body = response.json()
    assert body["ok"] is True and body["error"] is None
    assert (body["question"], body["rows"]) == ("boundary layer", 5)
    assert body["answers"] == [
        {"rank": 1, "id": "a1", "score": BOUNDARY_LAYER[0][1], "title": "Boundary layer"},
        {"rank": 2, "id": "a3", "score": BOUNDARY_LAYER[1][1], "title": "Heat transfer"},
    ]
    assert body["unknown_ids"] == []
    assert json.loads(engine.requests[0].body)["size"] == 5
    assert engine.requests[0].headers["authorization"] == SECRET


def test_api_try_rows_default_to_the_collection_k(caller, es_ranker, engine):
    caller("trainer").post(f"/api/rankers/{es_ranker.pk}/try/", {"question": "boundary layer"}, format="json")

    assert json.loads(engine.requests[0].body)["size"] == 10


def test_api_try_reports_the_failed_mapping_part(caller, es_ranker, engine):
    engine.faults.drop, engine.faults.drop_at = "_id", 1

    body = (
        caller("trainer")
        .post(f"/api/rankers/{es_ranker.pk}/try/", {"question": "boundary layer"}, format="json")
        .json()
    )

    assert body["ok"] is False and body["answers"] == []
    assert body["error"]["part"] == "response.hits.hits[1]._id"
    assert body["error"]["detail"].endswith(": response.hits.hits[1]._id missing")
    assert body["error"]["transient"] is False


def test_api_try_reports_the_engine_message_never_the_secret(caller, es_ranker, engine):
    engine.faults.error_status = 401

    body = (
        caller("trainer")
        .post(f"/api/rankers/{es_ranker.pk}/try/", {"question": "boundary layer"}, format="json")
        .json()
    )

    assert body["error"]["status"] == 401
    assert body["error"]["engine_message"] == "unable to authenticate user [trainer]"
    assert "c2VjcmV0" not in json.dumps(body) and "tenant-secret" not in json.dumps(body)


def test_api_try_solr_error_message(caller, api_data, engine):
    ranker = ranker_create(
        collection=api_data.collection,
        name="Solr",
        kind="engine",
        config=solr_config(engine.url, request={"params": {"q": "{{question}}", "qf": "nosuch"}}),
    )

    body = caller("trainer").post(f"/api/rankers/{ranker.pk}/try/", {"question": "x"}, format="json").json()

    assert body["error"]["engine_message"] == "undefined field nosuch"
    assert body["error"]["status"] == 400


def test_api_try_unavailable_engine_is_transient(caller, es_ranker, engine):
    engine.faults.fail_first = 10

    body = (
        caller("trainer")
        .post(f"/api/rankers/{es_ranker.pk}/try/", {"question": "boundary layer"}, format="json")
        .json()
    )

    assert body["error"]["transient"] is True
    assert body["error"]["engine_message"] == "all shards failed"
    assert len(engine.requests) == 1  # es_config: no retries


@pytest.mark.parametrize(
    ("payload", "field"),
    [
        ({}, "question"),
        ({"question": ""}, "question"),
        ({"question": "x", "rows": 0}, "rows"),
        ({"question": "x", "rows": 101}, "rows"),
        ({"question": "a\x00b"}, "question"),
    ],
)
def test_api_try_bad_input_names_the_field(caller, es_ranker, engine, payload, field):
    response = caller("trainer").post(f"/api/rankers/{es_ranker.pk}/try/", payload, format="json")

    assert response.status_code == 400
    assert list(response.json()) == [field]
    assert engine.requests == []


def test_api_try_works_for_http_rankers_too(caller, api_data):
    # api_data's http ranker points at port 9 (discard): nothing listens, a transient failure.
    body = (
        caller("trainer")
        .post(f"/api/rankers/{api_data.ranker.pk}/try/", {"question": "boundary layer"}, format="json")
        .json()
    )

    assert body["ok"] is False
    assert body["error"]["transient"] is True
    assert body["error"]["part"] is None


def test_api_engine_ranker_announces_versions(caller, es_ranker):
    response = caller("trainer_token").post(
        f"/api/rankers/{es_ranker.pk}/versions/", {"label": "index-2026-11"}, format="json"
    )

    assert response.status_code == 202, response.content
    assert response.json()["version"]["label"] == "index-2026-11"


def test_api_patch_http_ranker_with_masked_auth_header_keeps_it(caller, api_data):
    client = caller("trainer")
    shown = client.get(f"/api/rankers/{api_data.ranker.pk}/").json()["config"]
    assert shown["auth_header"] == MASK

    response = client.patch(
        f"/api/rankers/{api_data.ranker.pk}/", {"config": {**shown, "timeout": 4}}, format="json"
    )

    assert response.status_code == 200, response.content
    api_data.ranker.refresh_from_db()
    assert (api_data.ranker.config["auth_header"], api_data.ranker.config["timeout"]) == ("k", 4)
