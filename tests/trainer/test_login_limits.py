"""Brute force: failed logins are limited per account and per address; so are invalid API tokens."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from rest_framework.test import APIClient

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
