"""Deleting a collection takes its judges' user accounts with it, and nobody else's."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from corpus.models import Role
from judges.services import judge_create, judge_delete

pytestmark = pytest.mark.django_db


def test_collection_delete_removes_its_judges_users_only(collection, other_collection, make_user):
    person = make_user("rita", collection=collection, role=Role.RATER)
    judge = judge_create(collection=collection, name="B", kind="builtin")
    elsewhere = judge_create(collection=other_collection, name="C", kind="builtin")
    judge_user_id = judge.account.user_id

    collection.delete()

    users = get_user_model().objects
    assert not users.filter(pk=judge_user_id).exists()
    assert users.filter(pk=person.pk).exists()
    assert users.filter(pk=elsewhere.account.user_id).exists()


def test_judge_delete_still_removes_its_user(collection):
    judge = judge_create(collection=collection, name="B", kind="builtin")
    user_id = judge.account.user_id

    judge_delete(judge=judge)

    assert not get_user_model().objects.filter(pk=user_id).exists()
