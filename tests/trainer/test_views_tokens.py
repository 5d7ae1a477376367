"""The Tokens page: list, create (the key shown once), revoke; only one's own tokens."""

from __future__ import annotations

import re

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse

from corpus.models import Role
from corpus.services import membership_set
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
    assert (
        "You are a rater in each of your collections, so your tokens can only be rater tokens."
        in response.content.decode()
    )
    assert not ApiToken.objects.exists()


def test_tokens_page_offers_a_rater_only_the_rater_role(client, rater, collection):
    client.force_login(rater)

    html = client.get(reverse("tokens")).content.decode()

    assert re.findall(r'<option value="(\w+)"[^>]*>(\w+)</option>', html) == [("rater", "Rater")]
    assert '<option value="tiny">Tiny (you are a rater there)</option>' in html


def test_tokens_page_trainer_here_and_rater_there_is_refused_a_trainer_token_there(
    client, trainer, collection, other_collection
):
    membership_set(collection=other_collection, user=trainer, role=Role.RATER)
    client.force_login(trainer)
    html = client.get(reverse("tokens")).content.decode()
    assert '<option value="trainer">Trainer</option>' in html  # a trainer of tiny

    response = client.post(
        reverse("tokens"), {"collection": "other", "role": "trainer", "name": "x", "days": 7}
    )

    assert response.status_code == 400
    assert (
        "You are a rater in Other, so a token there can only be a rater token." in response.content.decode()
    )
    assert not ApiToken.objects.exists()


def nav_links(client, user) -> list[str]:
    client.force_login(user)
    nav = re.search(r'<nav aria-label="Main">(.*?)</nav>', client.get(reverse("home")).content.decode(), re.S)
    return re.findall(r">([^<>]+)</a>", nav.group(1))


def test_nav_shows_api_and_tokens_only_to_whom_can_use_them(client, rater, trainer, collection):
    assert nav_links(client, rater) == ["My collections", "Evaluation"]
    assert nav_links(client, trainer) == ["My collections", "Evaluation", "API", "Tokens"]
    api_token_create(collection=collection, user=rater)  # made by a script or an admin: theirs to revoke
    assert nav_links(client, rater) == ["My collections", "Evaluation", "API", "Tokens"]


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


def test_tokens_page_too_long_name_is_refused_naming_the_field(client, rater, collection):
    client.force_login(rater)

    response = client.post(
        reverse("tokens"), {"collection": "tiny", "role": "rater", "name": "n" * 201, "days": 7}
    )

    assert response.status_code == 400
    html = response.content.decode()
    assert re.search(r'<input type="text" name="name" value="n{201}" maxlength="200"', html)
    assert "Ensure this value has at most 200 characters (it has 201)." in html
    assert not ApiToken.objects.exists()


def test_api_token_create_too_long_name_is_refused_not_cut(rater, collection):
    with pytest.raises(ValidationError) as error:
        api_token_create(collection=collection, user=rater, name="n" * 201)

    assert error.value.message_dict == {"name": ["The name can be at most 200 characters, not 201."]}
    assert not ApiToken.objects.exists()
