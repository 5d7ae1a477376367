"""Brute force: failed logins are limited per account and per address; so are invalid API tokens."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.core.cache import cache
from django.utils import timezone
from rest_framework.test import APIClient

from trainer.models import ApiToken
from trainer.services import api_token_create

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


def _login(client, username: str, password: str, address: str = "10.0.0.1"):
    return client.post("/login/", {"username": username, "password": password}, REMOTE_ADDR=address)


def test_login_after_ten_wrong_passwords_even_the_right_one_is_refused(client, rater):
    statuses = [_login(client, "rita", "wrong").status_code for _ in range(10)]

    response = _login(client, "rita", "pw-rita")

    assert statuses == [200] * 9 + [429]  # the form again with its error, then the tenth locks

    assert response.status_code == 429
    assert "Too many failed logins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_login_ten_wrong_passwords_from_one_address_lock_it_for_every_account(client, rater, trainer):
    for n in range(10):
        _login(client, f"nobody{n}", "wrong", address="10.0.0.9")

    assert _login(client, "tom", "pw-tom", address="10.0.0.9").status_code == 429
    assert _login(client, "tom", "pw-tom", address="10.0.0.10").status_code == 302  # another address


def test_login_success_resets_the_count(client, rater):
    for _ in range(9):
        _login(client, "rita", "wrong")
    assert _login(client, "rita", "pw-rita").status_code == 302
    client.logout()

    for _ in range(9):
        _login(client, "rita", "wrong")
    assert _login(client, "rita", "pw-rita").status_code == 302


def test_api_invalid_tokens_from_one_address_get_429_with_retry_after(collection, rater, settings):
    settings.API_INVALID_TOKENS_PER_MINUTE = 5
    client = APIClient(REMOTE_ADDR="10.0.0.7")
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
    statuses = [client.get("/api/collections/").status_code for _ in range(5)]

    response = client.get("/api/collections/")

    assert statuses == [401] * 5
    assert response.status_code == 429
    assert 1 <= int(response["Retry-After"]) <= 60
    _, key = api_token_create(collection=collection, user=rater)
    other = APIClient(REMOTE_ADDR="10.0.0.8")
    other.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert other.get("/api/collections/").status_code == 200


@pytest.fixture
def blocked_address(collection, rater, settings, monkeypatch):
    """10.0.0.7 has spent its invalid-token budget (5) this minute; the clock stands still at :10."""
    from api import token_budget

    settings.API_INVALID_TOKENS_PER_MINUTE = 5
    monkeypatch.setattr(token_budget, "timer", lambda: 1_800_000_010.0)
    client = APIClient(REMOTE_ADDR="10.0.0.7")
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")
    assert [client.get("/api/collections/").status_code for _ in range(5)] == [401] * 5
    return client


def _answer(response) -> tuple:
    return response.status_code, response.json(), dict(response.headers)


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("get", "/api/collections/", None),
        ("post", "/api/collections/tiny/ratings/", {"question_id": "q1", "answer_id": "a1", "stars": 2}),
    ],
)
def test_api_blocked_address_gets_the_same_429_for_a_valid_key(
    blocked_address, collection, rater, method, path, body
):
    _, key = api_token_create(collection=collection, user=rater)
    valid = APIClient(REMOTE_ADDR="10.0.0.7")
    valid.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    invalid_answer = _answer(getattr(blocked_address, method)(path, body, format="json"))
    valid_answer = _answer(getattr(valid, method)(path, body, format="json"))

    assert valid_answer == invalid_answer
    assert invalid_answer[:2] == (
        429,
        {"detail": "Too many invalid tokens from this address. Expected available in 50 seconds."},
    )
    assert invalid_answer[2]["Retry-After"] == "50"


def test_api_blocked_address_gets_429_for_an_expired_key(blocked_address, collection, rater):
    token, key = api_token_create(collection=collection, user=rater)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(days=1))
    client = APIClient(REMOTE_ADDR="10.0.0.7")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    assert client.get("/api/collections/").status_code == 429


def test_api_blocked_address_gets_429_for_a_valid_key_on_a_view_without_throttles(
    blocked_address, collection, rater, monkeypatch
):
    """The budget is checked in the throttle's round trip only where a throttle carries it."""
    from api.views_ratings import RatingCreateView

    monkeypatch.setattr(RatingCreateView, "throttle_classes", [])
    _, key = api_token_create(collection=collection, user=rater)
    client = APIClient(REMOTE_ADDR="10.0.0.7")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    response = client.post(
        "/api/collections/tiny/ratings/", {"question_id": "q1", "answer_id": "a1", "stars": 2}, format="json"
    )

    assert (response.status_code, response.json()) == (
        429,
        {"detail": "Too many invalid tokens from this address. Expected available in 50 seconds."},
    )


def test_api_blocked_address_gets_429_for_a_valid_key_before_a_stricter_permission(
    blocked_address, collection, rater, monkeypatch
):
    """A permission that refuses (403) runs before the throttles: then the budget is checked first."""
    from rest_framework.permissions import BasePermission

    from api.views_ratings import RatingCreateView

    class Never(BasePermission):
        def has_permission(self, request, view):
            return False

    monkeypatch.setattr(RatingCreateView, "permission_classes", [Never])
    _, key = api_token_create(collection=collection, user=rater)
    client = APIClient(REMOTE_ADDR="10.0.0.7")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    response = client.post(
        "/api/collections/tiny/ratings/", {"question_id": "q1", "answer_id": "a1", "stars": 2}, format="json"
    )

    assert response.status_code == 429


def test_api_valid_key_budget_checked_in_the_throttles_round_trip(collection, rater, monkeypatch):
    """The hot path (a service posting ratings) reads no budget of its own: the user throttle's script does.
    A view that does not opt in has authentication read it at once."""
    from api import token_budget

    separate_reads = []
    check = token_budget.check
    monkeypatch.setattr(token_budget, "check", lambda key: (separate_reads.append(key), check(key)))
    _, key = api_token_create(collection=collection, user=rater)
    client = APIClient(REMOTE_ADDR="10.0.0.7")
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    body = {"question_id": "q1", "answer_id": "a1", "stars": 2}

    assert client.post("/api/collections/tiny/ratings/", body, format="json").status_code == 400  # no q1 here
    assert separate_reads == []
    assert client.get("/api/collections/").status_code == 200
    assert len(separate_reads) == 1


def _api_views():
    from django.urls import URLPattern, URLResolver, get_resolver

    def walk(patterns):
        for pattern in patterns:
            if isinstance(pattern, URLResolver):
                yield from walk(pattern.url_patterns)
            elif isinstance(pattern, URLPattern) and hasattr(pattern.callback, "view_class"):
                yield pattern.callback.view_class

    return set(walk(get_resolver().url_patterns))


def test_api_views_leaving_the_budget_to_the_throttle_cannot_answer_before_it():
    """An opted-in view's own steps must not run code that answers before the throttles (say a 403 that
    tells a blocked address its key is valid)."""
    from rest_framework.views import APIView

    from api.token_budget import STEPS

    opted_in = [view for view in _api_views() if getattr(view, "token_budget_in_throttle", False)]

    assert opted_in  # the ratings endpoint, at least
    for view in opted_in:
        assert [step for step in STEPS if getattr(view, step) is not getattr(APIView, step)] == [], view
