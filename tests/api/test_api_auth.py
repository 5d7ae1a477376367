"""Token authentication, the create_api_token command, and throttling."""

from __future__ import annotations

import uuid
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from api.throttling import SlidingWindowThrottle
from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from trainer.models import ApiToken
from trainer.services import api_token_create, api_token_revoke

pytestmark = pytest.mark.django_db


def client_with(header: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=header)
    return client


def test_api_token_valid_sets_last_used(collection, rater):
    token, key = api_token_create(collection=collection, user=rater)

    assert client_with(f"Token {key}").get("/api/collections/tiny/").status_code == 200
    token.refresh_from_db()
    assert token.last_used_at is not None


@pytest.mark.parametrize(
    ("header", "detail"),
    [
        ("Token wrong", "Invalid or revoked token."),
        ("Token", "Malformed Authorization header: use 'Authorization: Token <key>'."),
        ("Token a b", "Malformed Authorization header: use 'Authorization: Token <key>'."),
    ],
)
def test_api_token_bad_header_is_401(collection, header, detail):
    response = client_with(header).get("/api/collections/")

    assert (response.status_code, response.json()) == (401, {"detail": detail})


def test_api_token_revoked_is_401(collection, rater):
    token, key = api_token_create(collection=collection, user=rater)
    api_token_revoke(token=token)

    assert client_with(f"Token {key}").get("/api/collections/").status_code == 401


def test_api_token_of_inactive_user_is_401(collection, rater):
    _, key = api_token_create(collection=collection, user=rater)
    rater.is_active = False
    rater.save()

    assert client_with(f"Token {key}").get("/api/collections/").status_code == 401


def test_create_api_token_command_prints_key_once(collection, trainer):
    out, err = StringIO(), StringIO()

    call_command(
        "create_api_token",
        "--collection",
        "tiny",
        "--user",
        "tom",
        "--role",
        "trainer",
        "--name",
        "svc",
        stdout=out,
        stderr=err,
    )

    key = out.getvalue().strip()
    token = ApiToken.objects.get()
    assert (token.key_hash, token.role, token.name) == (ApiToken.hash_key(key), "trainer", "svc")
    assert "not shown again" in err.getvalue()


def test_create_api_token_command_rater_cannot_get_trainer_token(collection, rater):
    with pytest.raises(CommandError, match="cannot hold a trainer token"):
        call_command("create_api_token", "--collection", "tiny", "--user", "rita", "--role", "trainer")


def test_api_throttles_users(monkeypatch, collection, rater):
    from django.core.cache import cache

    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "100000/min", "user": "2/min"})
    now = 1_800_000_000.0  # a fixed clock, so the three requests fall in one window
    monkeypatch.setattr(SlidingWindowThrottle, "timer", staticmethod(lambda: now))
    cache.delete(SlidingWindowThrottle.storage_key(f"throttle_user_{rater.pk}"))  # a shared cache
    client = APIClient()
    client.force_login(rater)

    responses = [client.get("/api/collections/") for _ in range(3)]

    assert [r.status_code for r in responses] == [200, 200, 429]
    assert "Request was throttled" in responses[2].json()["detail"]
    assert responses[2]["Retry-After"] == "60"


def test_api_throttle_limit_holds_over_any_period_not_per_clock_minute(monkeypatch, collection, rater):
    """3/min: 3 requests a second before a clock minute ends leave no room a second after it begins."""
    from django.core.cache import cache

    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "100000/min", "user": "3/min"})
    clock = [1_800_000_059.0]  # …:59 of a clock minute
    monkeypatch.setattr(SlidingWindowThrottle, "timer", staticmethod(lambda: clock[0]))
    cache.delete(SlidingWindowThrottle.storage_key(f"throttle_user_{rater.pk}"))
    client = APIClient()
    client.force_login(rater)

    first = [client.get("/api/collections/").status_code for _ in range(3)]
    clock[0] = 1_800_000_061.0  # the next clock minute, 2 s later
    refused = client.get("/api/collections/")
    clock[0] = 1_800_000_119.5  # 60.5 s after the first three: they have left the window
    again = client.get("/api/collections/")

    assert first == [200, 200, 200]
    assert (refused.status_code, refused["Retry-After"]) == (429, "58")
    assert again.status_code == 200


def test_api_throttles_anonymous_requests_to_open_endpoints(monkeypatch):
    # Anonymous calls to the other endpoints end at 401 before any throttle is consulted.
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"anon": "2/min", "user": "100000/min"})
    client = APIClient(REMOTE_ADDR=f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.7")

    statuses = [client.get("/api/schema/").status_code for _ in range(3)]

    assert statuses == [200, 200, 429]


def test_api_schema_and_docs_are_served(collection, rater):
    client = APIClient()
    client.force_login(rater)

    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    paths = schema.json()["paths"]
    assert "/api/collections/{slug}/ground-truth/" in paths
    assert set(paths["/api/rankers/{ranker_id}/versions/"]["post"]["responses"]) == {
        "202",
        "400",
        "401",
        "403",
        "404",
        "429",
        "503",
    }
    assert client.get("/api/docs/").status_code == 200


def test_api_token_by_hash_loads_what_the_orm_loads(collection, rater):
    from api.access import MEMBER_ROLE, token_by_hash

    token, key = api_token_create(collection=collection, user=rater, days=30)
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=token.created_at)
    expected = ApiToken.objects.select_related("user", "collection").get(pk=token.pk)

    found = token_by_hash(ApiToken.hash_key(key))

    assert found is not None
    for got, want in (
        (found, expected),
        (found.user, expected.user),
        (found.collection, expected.collection),
    ):
        fields = [f.attname for f in type(want)._meta.concrete_fields]
        assert {f: getattr(got, f) for f in fields} == {f: getattr(want, f) for f in fields}
        assert got._state.adding is False
    assert (getattr(found, MEMBER_ROLE), found.revoked, found.expires_at.tzinfo is not None) == (
        "rater",
        False,
        True,
    )
    assert token_by_hash(ApiToken.hash_key("wrong")) is None
    api_token_revoke(token=token)
    assert token_by_hash(ApiToken.hash_key(key)) is None
