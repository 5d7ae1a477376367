"""Who may do what in a collection. Every page, API endpoint and service asks ``collection_access``.

| who                                         | role      | see, rate | manage | labels (``can_see_labels``)   |
|---------------------------------------------|-----------|-----------|--------|-------------------------------|
| a trainer member                            | trainer   | yes       | yes    | every split                   |
| a superuser, member or not                  | trainer   | yes       | yes    | every split                   |
| a rater member                              | rater     | yes       | 403    | the training split only       |
| anyone else: not a member, signed out       | None      | 404       | 404    | none                          |

- "see, rate": the collection's rating pages, dashboard, question pages, its API reads and rating saves;
- "manage": everything beyond that: settings, members, imports, rankers and trainings, starting
  evaluations and the run and compare pages, judges, every rater's progress. A rater gets 403 saying so;
- 404 for those who may not see the collection: whether it exists is not disclosed (pages send the
  signed out to log in first); an inactive account counts as signed out;
- test labels are what evaluations score, so raters never see them;
- API tokens narrow this (``api.access``): a token acts only in its own collection, with the
  lower of its role and its user's.

Here:

- ``collection_access`` applies the table to a user and a collection (one indexed query for the
  membership, none when the caller read it already);
- ``collection_and_access`` finds a collection by slug with the user's membership in one query;
  ``collections_and_access`` every collection the user may see, with their access to each;
- ``page_collection`` and ``Access.or_refuse`` are the web pages' adapter (Http404, PermissionDenied);
  ``api.access`` is the API's (DRF's NotFound, PermissionDenied).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db.models import OuterRef, Subquery
from django.http import Http404

from corpus.models import Collection, Membership, Role, Split

TRAINERS_ONLY = "Only the collection's trainers can do this."
# The membership role ``collection_and_access`` reads with the collection (removed from it once read).
_MEMBER_ROLE = "access_member_role"


class _Unread(enum.Enum):
    UNREAD = enum.auto()


@dataclass(frozen=True)
class Access:
    """What one user may do in one collection (``collection_access``), by the table above."""

    role: str | None  # Role.TRAINER, Role.RATER, or None: may not see the collection

    @property
    def may_see(self) -> bool:
        return self.role is not None

    @property
    def may_rate(self) -> bool:
        return self.role in (Role.RATER, Role.TRAINER)  # every member: the same as may_see

    @property
    def may_manage(self) -> bool:
        return self.role == Role.TRAINER

    def or_refuse(self, *, manage: bool = False, refusal: str = TRAINERS_ONLY) -> Access:
        """This access if it lets the user see the page (``manage``: a trainer's page), else Http404 for a
        non-member (the collection's existence is not disclosed) or PermissionDenied(``refusal``, shown
        on the 403 page) for a rater."""
        if not self.may_see:
            raise Http404("No such collection.")
        if manage and not self.may_manage:
            raise PermissionDenied(refusal)
        return self


def collection_access(
    *,
    user: User | AnonymousUser,
    collection: Collection,
    member_role: str | None | _Unread = _Unread.UNREAD,
) -> Access:
    """The user's access to the collection: the one place the table above is applied.

    ``member_role`` is the user's ``Membership.role`` in the collection (None: not a member) when the
    caller read it with something else (the rating pages' ``rating_target``, an API token's
    ``token_by_hash``, ``collection_and_access``); left out, it is read here, one indexed query, unless
    the user's account settles it (signed out, inactive, superuser).
    """
    if not user.is_authenticated or not user.is_active:
        return Access(None)
    if user.is_superuser:
        return Access(Role.TRAINER)
    if member_role is _Unread.UNREAD:
        member_role = (
            Membership.objects.filter(user=user, collection=collection).values_list("role", flat=True).first()
        )
    return Access(member_role)


def collection_and_access(*, user: User | AnonymousUser, slug: str) -> tuple[Collection | None, Access]:
    """The collection with this slug (None: no such collection) and the user's access to it, in one query
    (the membership is read with the collection, as a subquery)."""
    collections = Collection.objects.filter(slug=slug)
    if not user.is_authenticated or not user.is_active or user.is_superuser:  # the account settles it
        collection = collections.first()
    else:
        membership = Membership.objects.filter(user=user, collection=OuterRef("pk")).values("role")[:1]
        collection = collections.annotate(**{_MEMBER_ROLE: Subquery(membership)}).first()
    if collection is None:
        return None, Access(None)
    member_role = collection.__dict__.pop(_MEMBER_ROLE, _Unread.UNREAD)
    return collection, collection_access(user=user, collection=collection, member_role=member_role)


def collections_and_access(*, user: User | AnonymousUser) -> list[tuple[Collection, Access]]:
    """Every collection the user may see, by name, with their access to each (``collection_access``), in
    one query (each membership's role is read with its collection). What a page offers per collection:
    the token roles one may hold there, whether one trains anywhere."""
    if not user.is_authenticated or not user.is_active:
        return []
    collections = Collection.objects.order_by("name", "pk")
    if not user.is_superuser:  # a superuser is a trainer everywhere: the account settles it
        membership = Membership.objects.filter(user=user, collection=OuterRef("pk")).values("role")[:1]
        collections = collections.annotate(**{_MEMBER_ROLE: Subquery(membership)}).filter(
            **{f"{_MEMBER_ROLE}__isnull": False}
        )
    found = []
    for collection in collections:
        member_role = collection.__dict__.pop(_MEMBER_ROLE, _Unread.UNREAD)
        found.append(
            (collection, collection_access(user=user, collection=collection, member_role=member_role))
        )
    return found


def page_collection(
    *, user: User | AnonymousUser, slug: str, manage: bool = False, refusal: str = TRAINERS_ONLY
) -> tuple[Collection, Access]:
    """The web pages' adapter: the collection with this slug and the user's access, in one query, when
    the user may see the page (``manage``: a trainer's page); else ``Access.or_refuse``'s 404 or 403."""
    collection, access = collection_and_access(user=user, slug=slug)
    access.or_refuse(manage=manage, refusal=refusal)
    assert collection is not None  # no collection: no access, refused above
    return collection, access


def can_see_labels(*, role: str | None, split: str) -> bool:
    """Whether a caller with ``role`` may see the labels of questions in ``split`` ("train", "test", "all").

    The one rule for every place that shows labels (API evaluation details, ground-truth exports,
    evaluation pages): trainers see every split; raters only the training split, because test labels are
    what evaluations score, and a rater (or a ranker service holding a rater token) that could read them
    could game the score or train on them. Non-members see nothing.
    """
    if role == Role.TRAINER:
        return True
    return role == Role.RATER and split == Split.TRAIN


def can_create_collections(*, user: User | AnonymousUser) -> bool:
    """Superusers, staff, and anyone who already trains some collection may start a new one."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser or user.is_staff:
        return True
    return Membership.objects.filter(user=user, role=Role.TRAINER).exists()
