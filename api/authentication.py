"""``Authorization: Token <key>`` for services, against ``trainer.models.ApiToken``.

A token acts as its user, but only in its one collection and with at most its role (see
``api.access``). Only the SHA-256 of a key is stored, so a key is checked by hashing it.
"""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.exceptions import AuthenticationFailed

from api import token_budget
from api.access import token_by_hash
from trainer.models import ApiToken

KEYWORD = "Token"
# last_used_at is informational; writing it on every request would turn each read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


class ApiTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD.lower().encode():
            return None
        if len(parts) != 2:
            raise AuthenticationFailed("Malformed Authorization header: use 'Authorization: Token <key>'.")
        budget_key = token_budget.key(request.META.get("REMOTE_ADDR", ""))
        try:
            key = parts[1].decode("ascii")
        except UnicodeDecodeError:
            key = ""
        token = token_by_hash(ApiToken.hash_key(key))
        if token is None or not token.user.is_active:
            if token_budget.failure_count(budget_key) > token_budget.limit():
                # Guessing keys: the same 429 as a valid key gets from this address, until the minute ends.
                raise token_budget.refusal()
            raise AuthenticationFailed("Invalid or revoked token.")
        now = timezone.now()
        if token.expires_at is not None and token.expires_at <= now:
            token_budget.check(budget_key)  # an address over its budget must not learn that this key exists
            raise AuthenticationFailed(
                f"This token expired on {token.expires_at:%Y-%m-%d}; create a new one (your Tokens page)."
            )
        # A valid key: an address over its budget must not learn so either (see token_budget). The check is
        # a cache round trip, so it is left to the throttle's own when the view allows (the hot path).
        if token_budget.deferrable((request.parser_context or {}).get("view")):
            token_budget.defer(request, budget_key)
        else:
            token_budget.check(budget_key)
        if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return token.user, token

    def authenticate_header(self, request) -> str:
        # Makes DRF answer 401 (with WWW-Authenticate) rather than 403 to a request without credentials.
        return KEYWORD


class ApiTokenScheme(OpenApiAuthenticationExtension):
    target_class = "api.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "header",
            "name": "Authorization",
            "description": "A collection-scoped service token: `Token <key>` (create one with "
            "`manage.py create_api_token`).",
        }
