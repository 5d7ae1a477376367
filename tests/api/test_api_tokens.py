"""Tokens expire, record their last use, and their owner lists and revokes them (API)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.trainer.api_support import *  # noqa: F403 - fixtures and helpers
from trainer.models import ApiToken
from trainer.services import api_token_create

pytestmark = pytest.mark.django_db


def test_api_token_expires_after_the_default_days(collection, rater, settings):
    settings.API_TOKEN_DAYS = 30
    before = timezone.now()

    token, _ = api_token_create(collection=collection, user=rater)

    assert before + timedelta(days=30) <= token.expires_at <= timezone.now() + timedelta(days=30)
    assert api_token_create(collection=collection, user=rater, days=0)[0].expires_at is None


def test_api_expired_token_is_refused_naming_the_date(collection, rater):
    token, key = api_token_create(collection=collection, user=rater)
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(days=1))
    client = APIClient()  # noqa: F405 - from api_support
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")

    response = client.get("/api/collections/")

    expired = (timezone.now() - timedelta(days=1)).strftime("%Y-%m-%d")
    assert response.status_code == 401
    assert response.json() == {
        "detail": f"This token expired on {expired}; create a new one (your Tokens page)."
    }


def test_api_tokens_list_shows_only_the_callers_own_and_their_last_use(api_data, caller, rater, trainer):
    client = caller("rater_token")  # creates a rater token of rita
    client.get("/api/collections/")
    api_token_create(collection=api_data.collection, user=trainer, name="not rita's")

    body = client.get("/api/tokens/").json()

    assert [(t["collection"], t["role"], t["revoked"], t["expired"]) for t in body["results"]] == [
        ("tiny", "rater", False, False)
    ]
    assert body["results"][0]["last_used_at"] is not None
    assert "key" not in body["results"][0] and "key_hash" not in body["results"][0]


def test_api_token_revoke_own_then_it_no_longer_works(api_data, caller):
    client = caller("trainer_token")
    [mine] = client.get("/api/tokens/").json()["results"]

    response = client.post(f"/api/tokens/{mine['id']}/revoke/", {}, format="json")

    assert (response.status_code, response.json()["revoked"]) == (200, True)
    assert client.get("/api/tokens/").status_code == 401


def test_api_token_revoke_someone_elses_is_404(api_data, caller, trainer):
    other, _ = api_token_create(collection=api_data.collection, user=trainer)

    response = caller("rater").post(f"/api/tokens/{other.pk}/revoke/", {}, format="json")

    assert response.status_code == 404
    assert ApiToken.objects.get(pk=other.pk).revoked is False


def test_api_tokens_anonymous_is_401(caller):
    assert caller("anonymous").get("/api/tokens/").status_code == 401
