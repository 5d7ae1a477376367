"""The Tokens page: list, create (the key shown once), revoke; only one's own tokens."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from trainer.models import ApiToken
from trainer.services import api_token_create

pytestmark = pytest.mark.django_db


def test_tokens_page_anonymous_redirects_to_login(client):
    assert client.get(reverse("tokens")).status_code == 302


def test_tokens_page_create_shows_the_key_once_and_lists_the_token(client, rater, collection):
    client.force_login(rater)

    response = client.post(
        reverse("tokens"), {"collection": "tiny", "role": "rater", "name": "script", "days": 7}
    )

    key = re.search(r'data-testid="new-key">([0-9a-f]+)<', response.content.decode()).group(1)
    token = ApiToken.objects.get(user=rater)
    assert token.key_hash == ApiToken.hash_key(key)
    assert (token.name, round((token.expires_at - token.created_at).total_seconds() / 86400)) == ("script", 7)
    assert key not in client.get(reverse("tokens")).content.decode()  # never shown again


def test_tokens_page_rater_cannot_make_a_trainer_token(client, rater, collection):
    client.force_login(rater)

    response = client.post(
        reverse("tokens"), {"collection": "tiny", "role": "trainer", "name": "x", "days": 7}
    )

    assert response.status_code == 400
    assert "is a rater in tiny, so cannot hold a trainer token" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_tokens_page_other_collection_is_not_offered(client, rater, other_collection):
    client.force_login(rater)

    response = client.post(
        reverse("tokens"), {"collection": "other", "role": "rater", "name": "x", "days": 7}
    )

    assert response.status_code == 400
    assert not ApiToken.objects.exists()


def test_tokens_page_revoke_own_and_not_someone_elses(client, rater, trainer, collection):
    mine, _ = api_token_create(collection=collection, user=rater)
    theirs, _ = api_token_create(collection=collection, user=trainer)
    client.force_login(rater)

    assert client.post(reverse("token-revoke", args=[mine.pk])).status_code == 302
    assert client.post(reverse("token-revoke", args=[theirs.pk])).status_code == 404
    assert (ApiToken.objects.get(pk=mine.pk).revoked, ApiToken.objects.get(pk=theirs.pk).revoked) == (
        True,
        False,
    )
