"""Who may do what in a collection. Every view, API endpoint and service caller checks through here.

- raters rate in the collections they are members of;
- trainers also manage the collection, its rankers and evaluations, and see every rater's progress;
- superusers are trainers everywhere;
- raters never see the labels of test questions (``can_see_labels``): they are what evaluations score.
"""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User

from corpus.models import Collection, Membership, Role, Split


def collection_role(*, user: User | AnonymousUser, collection: Collection) -> str | None:
    """The user's role in the collection: "trainer", "rater", or None for a non-member."""
    if not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return Role.TRAINER
    # Views that check many collections should prefetch; a single check is one indexed query.
    membership = Membership.objects.filter(user=user, collection=collection).values_list("role", flat=True)
    return role_from_membership(user=user, membership_role=membership.first())


def role_from_membership(*, user: User | AnonymousUser, membership_role: str | None) -> str | None:
    """``collection_role`` when the user's membership role in the collection (None: not a member) was
    already read with something else, e.g. with an API token (``trainer.api.access``)."""
    if not user.is_authenticated or not user.is_active:
        return None
    if user.is_superuser:
        return Role.TRAINER
    return membership_role


def can_rate(*, user: User | AnonymousUser, collection: Collection) -> bool:
    return collection_role(user=user, collection=collection) in {Role.RATER, Role.TRAINER}


def can_manage(*, user: User | AnonymousUser, collection: Collection) -> bool:
    return collection_role(user=user, collection=collection) == Role.TRAINER


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
