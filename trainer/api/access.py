"""Who may do what through the API: the web roles (corpus.permissions), narrowed for tokens.

- A session user has their membership role in each collection (superusers: trainer everywhere).
- A token acts only in its own collection, with the lower of its role and its user's current role, so
  removing someone from a collection also disables their tokens there.
- Collections the caller can't see answer 404 (their existence is not disclosed); a rater asking for a
  trainer's action gets 403 saying so.
"""

from __future__ import annotations

from django.db.models import OuterRef, QuerySet, Subquery
from rest_framework.exceptions import NotFound, PermissionDenied

from corpus.models import Collection, Membership, Role
from corpus.permissions import collection_role, role_from_membership
from rankers.models import Ranker
from trainer.models import ApiToken

# The token user's membership role in the token's collection (None: not a member), read with the token
# (``with_member_role``, used by ``authentication.py``): the commonest check, a token acting in its own
# collection, then needs no statement of its own.
MEMBER_ROLE = "member_role_now"


def with_member_role(tokens: QuerySet[ApiToken]) -> QuerySet[ApiToken]:
    membership = Membership.objects.filter(
        user_id=OuterRef("user_id"), collection_id=OuterRef("collection_id")
    )
    return tokens.annotate(**{MEMBER_ROLE: Subquery(membership.values("role")[:1])})


def token_of(request) -> ApiToken | None:
    return request.auth if isinstance(request.auth, ApiToken) else None


def caller_role(request, collection: Collection) -> str | None:
    token = token_of(request)
    if token is not None and token.collection_id == collection.pk and hasattr(token, MEMBER_ROLE):
        user_role = role_from_membership(user=request.user, membership_role=getattr(token, MEMBER_ROLE))
    else:
        user_role = collection_role(user=request.user, collection=collection)
    if token is None or user_role is None:
        return user_role
    if token.collection_id != collection.pk:
        return None
    return Role.TRAINER if token.role == Role.TRAINER and user_role == Role.TRAINER else Role.RATER


def _check(request, collection: Collection, need: str, what: str) -> str:
    role = caller_role(request, collection)
    if role is None:
        raise NotFound(f"No {what} here that you can see.")
    if need == Role.TRAINER and role != Role.TRAINER:
        holder = "this token has" if token_of(request) else "you have"
        raise PermissionDenied(
            f"This needs the trainer role in collection {collection.slug!r}; {holder} the rater role."
        )
    return role


def collection_for(request, slug: str, *, need: str = Role.RATER) -> tuple[Collection, str]:
    """The collection and the caller's role in it, or 404/403."""
    token = token_of(request)
    collection: Collection | None
    if token is not None and token.collection.slug == slug:
        # The token's own collection, read with the token (the commonest case: a service posting ratings).
        collection = token.collection
    else:
        collection = Collection.objects.filter(slug=slug).first()
    if collection is None:
        raise NotFound(f"No collection {slug!r} that you can see.")
    return collection, _check(request, collection, need, f"collection {slug!r}")


def ranker_for(request, ranker_id: int, *, need: str = Role.RATER) -> tuple[Ranker, str]:
    ranker = Ranker.objects.select_related("collection").filter(pk=ranker_id).first()
    if ranker is None:
        raise NotFound(f"No ranker {ranker_id} that you can see.")
    return ranker, _check(request, ranker.collection, need, f"ranker {ranker_id}")
