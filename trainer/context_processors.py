"""What every page's navigation needs to know about the signed-in user (``TEMPLATES`` context processor)."""

from __future__ import annotations

from django.http import HttpRequest

from corpus.permissions import collections_and_access
from trainer.models import ApiToken


def uses_api(*, user) -> bool:
    """Whether the nav offers the API documentation and the Tokens page: to those who train a collection
    (``collection_access``: a token of theirs may drive a ranker service), staff, and anyone holding a token
    still in use (to see and revoke it). A rater who rates in the browser sees neither link; the pages
    stay at their addresses."""
    if not user.is_authenticated:
        return False
    if user.is_staff or any(access.may_manage for _, access in collections_and_access(user=user)):
        return True
    return ApiToken.objects.filter(user=user, revoked=False).exists()


def navigation(request: HttpRequest) -> dict:
    # A callable: read only when a template asks (the base template's nav), at most once per page.
    user = getattr(request, "user", None)
    result: list[bool] = []

    def shows_api_links() -> bool:
        if not result:
            result.append(user is not None and uses_api(user=user))
        return result[0]

    return {"shows_api_links": shows_api_links}
