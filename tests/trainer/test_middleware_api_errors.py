"""Everything under /api/ answers JSON: resolver 404s, bodies over the upload limit, NUL bytes in query
parameters, JSON nested too deeply and an unreachable database (config/middleware.py and
api/exceptions.py)."""

from __future__ import annotations

import json
from unittest import mock

import pytest
from django.db import InterfaceError, OperationalError
from django.db.backends.utils import CursorWrapper

from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers


def body(response) -> dict:
    assert response["Content-Type"] == "application/json", response.content[:200]
    return json.loads(response.content)


@pytest.mark.parametrize("debug", [False, True])
@pytest.mark.parametrize("path", ["/api/rankers/abc/", "/api/evaluations/-1/", "/api/no-such-endpoint/"])
def test_api_path_rejected_by_resolver_answers_json_404(caller, settings, path, debug):
    settings.DEBUG = debug
    response = caller("trainer_token").get(path)
    assert response.status_code == 404
    assert body(response) == {"detail": "Not found."}


def test_api_path_without_slash_still_redirects(caller):
    response = caller("trainer_token").get("/api/rankers")
    assert response.status_code == 301
    assert response["Location"] == "/api/rankers/"


def test_api_body_over_upload_limit_answers_json_413(caller, settings, collection):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    data = json.dumps([{"id": f"q{i}", "text": "x" * 50} for i in range(30)])
    assert len(data) > 1000
    response = caller("trainer_token").post(
        "/api/collections/tiny/questions/", data, content_type="application/json"
    )
    assert response.status_code == 413
    assert body(response) == {"detail": "Request body too large: the limit is 1000 bytes."}


@pytest.mark.parametrize("query", ["collection=%00", "collection=ti%00ny", "a%00b=1"])
def test_api_nul_in_query_parameter_answers_json_400(caller, query):
    response = caller("trainer_token").get(f"/api/rankers/?{query}")
    assert response.status_code == 400
    name = "a%00b" if query.startswith("a") else "collection"
    assert body(response) == {"detail": f"Query parameter '{name}' contains a NUL character (%00)."}


def test_api_deeply_nested_json_answers_400(caller, collection):
    response = caller("trainer_token").post(
        "/api/collections/tiny/questions/", "[" * 200_000, content_type="application/json"
    )
    assert response.status_code == 400
    assert body(response) == {"detail": "JSON parse error: the request body is nested too deeply."}


@pytest.mark.parametrize("error", [OperationalError, InterfaceError])
def test_api_database_unreachable_answers_json_503_with_retry_after(caller, error):
    client = caller("trainer_token")
    refused = error('connection to server at "127.0.0.1", port 5432 failed: Connection refused')
    with mock.patch.object(CursorWrapper, "execute", side_effect=refused):
        response = client.get("/api/rankers/")
    assert response.status_code == 503
    assert response["Retry-After"] == "10"
    assert body(response) == {
        "detail": "The database is unavailable; nothing was changed. Try again shortly."
    }


def test_api_unexpected_error_answers_json_500_under_debug(caller, settings):
    settings.DEBUG = True
    client = caller("trainer_token")
    client.raise_request_exception = False
    with mock.patch("api.views_rankers.RankerListView.get", side_effect=ZeroDivisionError("boom")):
        response = client.get("/api/rankers/")
    assert response.status_code == 500
    assert body(response) == {"detail": "Server error."}


def test_api_view_404_keeps_its_own_message(caller, api_data):
    response = caller("trainer_token").get("/api/rankers/999999/")
    assert response.status_code == 404
    assert body(response) == {"detail": "No ranker 999999 that you can see."}


def test_api_database_down_under_gunicorn_answers_json_503(tmp_path):
    """The real thing: production settings, PostgreSQL unreachable (nothing listens on the port)."""
    import http.client

    from tests.servers import free_port
    from tests.trainer.gunicorn_support import PRODUCTION, clean_env, gunicorn

    dead = f"postgres://postgres@127.0.0.1:{free_port()}/nothing"
    env = clean_env(**PRODUCTION, DATABASE_URL=dead, RANK_TRAINER_VAR_DIR=str(tmp_path))
    with gunicorn(env, tmp_path / "gunicorn.log") as port:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {
            "Host": "rank.example.com",
            "X-Forwarded-Proto": "https",  # as the TLS proxy in front sets it
            "Authorization": "Token not-checked-the-database-is-down",
        }
        connection.request("GET", "/api/rankers/", headers=headers)
        response = connection.getresponse()
        data = response.read()
    assert response.status == 503, data[:300]
    assert response.getheader("Content-Type") == "application/json"
    assert response.getheader("Retry-After") == "10"
    assert json.loads(data) == {
        "detail": "The database is unavailable; nothing was changed. Try again shortly."
    }
