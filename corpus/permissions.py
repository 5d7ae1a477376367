"""Who may do what in a collection. Every view, API endpoint and service caller checks through here.

- raters rate in the collections they are members of;
- trainers also manage the collection, its rankers and evaluations, and see every rater's progress;
- superusers are trainers everywhere.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

from corpus.models import Collection, Membership, Role


def collection_role(*, user: User | AnonymousUser, collection: Collection) -> str | None:
    """The user's role in the collection: "trainer", "rater", or None for a non-member."""
    if not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return Role.TRAINER
    # Views that check many collections should prefetch; a single check is one indexed query.
    return Membership.objects.filter(user=user, collection=collection).values_list("role", flat=True).first()


def can_rate(*, user: User | AnonymousUser, collection: Collection) -> bool:
    return collection_role(user=user, collection=collection) in {Role.RATER, Role.TRAINER}


def can_manage(*, user: User | AnonymousUser, collection: Collection) -> bool:
    return collection_role(user=user, collection=collection) == Role.TRAINER


def can_create_collections(*, user: User | AnonymousUser) -> bool:
    """Superusers, staff, and anyone who already trains some collection may start a new one."""
    if not user.is_authenticated or not user.is_active:
        return False
    if user.is_superuser or user.is_staff:
        return True
    return Membership.objects.filter(user=user, role=Role.TRAINER).exists()
