"""API tokens: issued for a user acting in one collection (only the key's hash stored), revoked."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from corpus.models import Collection, Role
from corpus.permissions import collection_access
from trainer.models import ApiToken

# A longer name is refused, naming the field, not cut short (the Tokens page's input has this maxlength).
TOKEN_NAME_MAX_LENGTH = ApiToken._meta.get_field("name").max_length or 200


@transaction.atomic
def api_token_create(
    *,
    collection: Collection,
    user: User,
    role: str = Role.RATER,
    name: str = "",
    days: int | None = None,
) -> tuple[ApiToken, str]:
    """Issue a token for a service acting as ``user`` in ``collection``. Returns the token and its key.

    The key is shown once: only its SHA-256 is stored. A token's role can't exceed its user's (a rater
    can't mint a trainer token; a superuser can mint either). It expires after ``days`` (default
    API_TOKEN_DAYS; 0 means never).
    """
    days = settings.API_TOKEN_DAYS if days is None else days
    if days < 0:
        raise ValidationError({"days": "days must be 0 (never expires) or more."})
    if len(name) > TOKEN_NAME_MAX_LENGTH:
        raise ValidationError(
            {"name": f"The name can be at most {TOKEN_NAME_MAX_LENGTH} characters, not {len(name)}."}
        )
    if role not in Role.values:
        raise ValidationError({"role": f"role must be one of {', '.join(Role.values)}, not {role!r}."})
    user_access = collection_access(user=user, collection=collection)
    if not user_access.may_see:
        raise ValidationError({"user": f"{user} is not a member of {collection.slug}."})
    if role == Role.TRAINER and not user_access.may_manage:
        raise ValidationError(
            {"role": f"{user} is a rater in {collection.slug}, so cannot hold a trainer token."}
        )
    key = ApiToken.generate_key()
    token = ApiToken.objects.create(
        name=name or f"{user} {role} token"[:TOKEN_NAME_MAX_LENGTH],
        collection=collection,
        role=role,
        user=user,
        key_prefix=key[:8],
        key_hash=ApiToken.hash_key(key),
        expires_at=timezone.now() + timedelta(days=days) if days else None,
    )
    return token, key


def api_token_revoke(*, token: ApiToken) -> ApiToken:
    token.revoked = True
    token.save(update_fields=["revoked"])
    return token


def api_token_revoke_own(*, user: User, token_id: int) -> ApiToken | None:
    """Revoke one of ``user``'s own tokens; None when they have no such token (someone else's included)."""
    token = ApiToken.objects.filter(pk=token_id, user=user).first()
    return None if token is None else api_token_revoke(token=token)
