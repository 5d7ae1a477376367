"""The invalid-token budget: an address that sent ``API_INVALID_TOKENS_PER_MINUTE`` wrong tokens this clock
minute gets 429 for every token request until the minute is over, whether its key is valid or not.

So an address guessing keys can't learn that one it tries is valid: once over the budget, a valid key
and an invalid one get the same 429 (same detail, same ``Retry-After``).

Checking the budget is a cache read, and every token request needs the check. An invalid token is
counted (``failure_count``) and refused with the 429 when that count is over the budget. A valid one
on the hot path (a service posting ratings: views that opt in with ``token_budget_in_throttle``) is
not checked by authentication: it leaves the check pending (``defer``) and the user throttle does it in
the same Redis round trip as its own window (``api.throttling``). Everywhere else, and on an
opted-in view that could answer before its throttles run (``deferrable``), authentication checks at
once (``check``), so every token endpoint keeps the rule.
"""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.cache import cache
from rest_framework.exceptions import Throttled
from rest_framework.permissions import AllowAny, IsAuthenticated

from trainer.cache import UNREACHABLE

DETAIL = "Too many invalid tokens from this address."
# Where a deferred check waits on the request for the throttle that carries it.
PENDING = "_invalid_token_budget_key"
# Permissions a valid token always passes: with only these, nothing but the throttles can answer
# between authentication and the view, so deferring the check to the throttle changes no answer.
_PASSED_BY_A_VALID_TOKEN = (IsAuthenticated, AllowAny)
# APIView's steps around authentication and the throttles; an opted-in view must not override any.
STEPS = ("dispatch", "initial", "check_permissions", "get_permissions", "check_throttles", "get_throttles")

timer = time.time


def key(address: str) -> str:
    """The cache key counting an address's invalid tokens this clock minute."""
    return f"api-invalid-tokens:{address}:{int(timer() // 60)}"


def limit() -> int:
    return settings.API_INVALID_TOKENS_PER_MINUTE


def refusal() -> Throttled:
    """The 429 of an address over its budget, the same for a valid and an invalid key."""
    return Throttled(wait=60 - int(timer()) % 60, detail=DETAIL)


def failure_count(budget_key: str) -> int:
    """Count one more invalid token; the count so far this minute (0 when the cache is down)."""
    try:
        if cache.add(budget_key, 1, timeout=120):
            return 1
        try:
            return cache.incr(budget_key)
        except ValueError:  # expired between add and incr
            cache.add(budget_key, 1, timeout=120)
            return 1
    except UNREACHABLE:  # the cache is not a dependency: nothing counted, nothing refused
        return 0


def check(budget_key: str) -> None:
    """429 now when the address is over its budget."""
    if (cache.get(budget_key) or 0) >= limit():
        raise refusal()


def deferrable(view: Any) -> bool:
    """Whether ``view`` (an APIView, or None) leaves the check to its throttle: it opts in
    (``token_budget_in_throttle``, the hot path), has a throttle that carries the check, and no permission
    a valid token can fail. (An opted-in view must not override the APIView steps around the throttles
    either, so that nothing answers before them: ``tests/trainer/test_login_limits.py`` checks each.)"""
    if view is None or not getattr(view, "token_budget_in_throttle", False):
        return False
    return all(p in _PASSED_BY_A_VALID_TOKEN for p in view.permission_classes) and any(
        getattr(t, "carries_token_budget", False) for t in view.throttle_classes
    )


def defer(request, budget_key: str) -> None:
    """Leave the check to the view's throttle (see ``deferrable``)."""
    setattr(request, PENDING, budget_key)


def take_pending(request) -> str | None:
    """The budget key a throttle must check for this request (once), or None."""
    budget_key = getattr(request, PENDING, None)
    if budget_key is not None:
        setattr(request, PENDING, None)
    return budget_key
