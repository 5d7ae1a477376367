"""Who may do what through the API: the API's adapter over ``corpus.permissions.collection_access`` (the
rule table), narrowed for tokens, refusing with DRF's exceptions.

- A session user has their membership role in each collection (superusers: trainer everywhere).
- A token acts only in its own collection, with the lower of its role and its user's current role, so
  removing someone from a collection also disables their tokens there.
- Collections the caller can't see answer 404 (their existence is not disclosed); a rater asking for a
  trainer's action gets 403 saying so.
"""

from __future__ import annotations

import functools

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import Model, QuerySet
from rest_framework.exceptions import NotFound, PermissionDenied

from corpus.models import Collection, Membership, Role
from corpus.permissions import collection_access, collection_and_access
from corpus.selectors import collections_for_user
from rankers.models import Ranker
from trainer.models import ApiToken

# The token user's membership role in the token's collection (None: not a member), read with the token
# (``token_by_hash``): the commonest check, a token acting in its own collection, then needs no statement
# of its own.
MEMBER_ROLE = "member_role_now"


def token_by_hash(key_hash: str) -> ApiToken | None:
    """The unrevoked token with this key hash, with its user, its collection and ``MEMBER_ROLE``, in one
    statement.

    Every token request starts here, so the statement is written once per process (``_token_statement``)
    instead of being built by the ORM each time: building and compiling the equivalent queryset (select
    related, a subquery) cost several times what running it does. Values go through the database
    converters the ORM would apply (SQLite's datetimes and booleans, for one).
    """
    sql, models, converters = _token_statement(connection.vendor)
    with connection.cursor() as cursor:
        cursor.execute(sql, [key_hash, False])
        row = cursor.fetchone()
    if row is None:
        return None
    values = list(row)
    for i, column_converters in converters:
        for converter, expression in column_converters:
            values[i] = converter(values[i], expression, connection)
    instances = []
    for model in models:
        fields = model._meta.concrete_fields
        instances.append(model.from_db(connection.alias, [f.attname for f in fields], values[: len(fields)]))
        values = values[len(fields) :]
    token, user, collection = instances
    assert isinstance(token, ApiToken) and isinstance(user, User) and isinstance(collection, Collection)
    token.user, token.collection = user, collection
    setattr(token, MEMBER_ROLE, values[0])
    return token


@functools.cache
def _token_statement(vendor: str) -> tuple[str, tuple[type[Model], ...], list[tuple[int, list]]]:
    """``token_by_hash``'s SQL (parameters: the key hash, False), the models of its columns in order (then
    the membership role), and the converters of the columns that have any, by column index."""
    quote = connection.ops.quote_name
    models: tuple[type[Model], ...] = (ApiToken, get_user_model(), Collection)
    token, user, collection = (m._meta for m in models)
    membership = Membership._meta

    def name(meta, field: str) -> str:
        return quote(meta.get_field(field).column)

    selected: list[str] = []
    converters: list[tuple[int, list]] = []
    for alias, model in zip("tuc", models, strict=True):
        for field in model._meta.concrete_fields:
            column = field.get_col(alias)
            found = connection.ops.get_db_converters(column) + column.get_db_converters(connection)
            if found:
                converters.append((len(selected), [(converter, column) for converter in found]))
            selected.append(f"{alias}.{quote(str(field.column))}")
    selected.append(
        f"(SELECT m.{name(membership, 'role')} FROM {quote(membership.db_table)} m "
        f"WHERE m.{name(membership, 'user')} = t.{name(token, 'user')} "
        f"AND m.{name(membership, 'collection')} = t.{name(token, 'collection')})"
    )
    sql = (
        f"SELECT {', '.join(selected)} FROM {quote(token.db_table)} t "
        f"JOIN {quote(user.db_table)} u ON u.{name(user, user.pk.name)} = t.{name(token, 'user')} "
        f"JOIN {quote(collection.db_table)} c ON c.{name(collection, collection.pk.name)} = t.{name(token, 'collection')} "
        f"WHERE t.{name(token, 'key_hash')} = %s AND t.{name(token, 'revoked')} = %s"
    )
    return sql, models, converters


def token_of(request) -> ApiToken | None:
    return request.auth if isinstance(request.auth, ApiToken) else None


def caller_role(request, collection: Collection) -> str | None:
    """The caller's role in the collection (None: may not see it): the user's, narrowed for a token."""
    token = token_of(request)
    if token is None:
        return collection_access(user=request.user, collection=collection).role
    if token.collection_id != collection.pk:
        return None  # a token acts only in its own collection
    if hasattr(token, MEMBER_ROLE):  # read with the token
        access = collection_access(
            user=request.user, collection=collection, member_role=getattr(token, MEMBER_ROLE)
        )
    else:
        access = collection_access(user=request.user, collection=collection)
    if not access.may_see:
        return None
    return Role.TRAINER if token.role == Role.TRAINER and access.may_manage else Role.RATER


def visible_collections(request) -> tuple[QuerySet[Collection], dict[int, str]]:
    """Collections the caller may see, and the caller's role in each."""
    token = token_of(request)
    if token is not None:
        role = caller_role(request, token.collection)
        ids = [token.collection_id] if role else []
        return Collection.objects.filter(pk__in=ids), ({token.collection_id: role} if role else {})
    collections = collections_for_user(user=request.user)
    if request.user.is_superuser:
        return collections, {pk: Role.TRAINER for pk in collections.values_list("pk", flat=True)}
    roles = dict(Membership.objects.filter(user=request.user).values_list("collection_id", "role"))
    return collections, roles


def _check(request, collection: Collection, role: str | None, need: str, what: str) -> str:
    """``role`` (``caller_role``) if it allows ``need``, else 404 (the caller may not see the collection)
    or 403."""
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
        role = caller_role(request, collection)
    elif token is not None:
        collection, role = Collection.objects.filter(slug=slug).first(), None  # not the token's collection
    else:
        collection, access = collection_and_access(user=request.user, slug=slug)
        role = access.role
    if collection is None:
        raise NotFound(f"No collection {slug!r} that you can see.")
    return collection, _check(request, collection, role, need, f"collection {slug!r}")


def ranker_for(request, ranker_id: int, *, need: str = Role.RATER) -> tuple[Ranker, str]:
    ranker = Ranker.objects.select_related("collection").filter(pk=ranker_id).first()
    if ranker is None:
        raise NotFound(f"No ranker {ranker_id} that you can see.")
    collection = ranker.collection
    return ranker, _check(request, collection, caller_role(request, collection), need, f"ranker {ranker_id}")
