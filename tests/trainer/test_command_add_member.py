"""add_member: a user made a trainer or rater of a collection from a script, created on request, and
every bad argument named in the error."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import CommandError, call_command

from corpus.models import Membership, Role
from corpus.services import collection_create
from tests.trainer.test_settings import run


@pytest.fixture
def aero(db):
    return collection_create(name="Aero", slug="aero")


def add_member(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command("add_member", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def test_add_member_existing_user_becomes_trainer(aero):
    User.objects.create_user("tom", password="pw")

    out, err = add_member("--collection", "aero", "--user", "tom", "--role", "trainer")

    assert (out, err) == ("tom is a trainer of aero.\n", "")
    assert list(Membership.objects.values_list("user__username", "collection__slug", "role")) == [
        ("tom", "aero", Role.TRAINER)
    ]


def test_add_member_a_member_changes_role_and_says_from_what(aero):
    tom = User.objects.create_user("tom", password="pw")
    Membership.objects.create(user=tom, collection=aero, role=Role.RATER)

    out, _ = add_member("--collection", "aero", "--user", "tom", "--role", "trainer")

    assert out == "tom is a trainer of aero (was rater).\n"
    assert Membership.objects.get(user=tom, collection=aero).role == Role.TRAINER


def test_add_member_create_makes_the_user_without_a_password_and_says_how_to_set_one(aero):
    out, err = add_member("--collection", "aero", "--user", "rita", "--role", "rater", "--create")

    rita = User.objects.get(username="rita")
    assert rita.has_usable_password() is False
    assert Membership.objects.get(user=rita, collection=aero).role == Role.RATER
    assert out == "rita is a rater of aero.\n"
    assert err == (
        "Created user 'rita' without a password; set one with: python manage.py changepassword rita\n"
    )


def test_add_member_create_keeps_an_existing_user_and_their_password(aero):
    User.objects.create_user("tom", password="pw")

    out, err = add_member("--collection", "aero", "--user", "tom", "--role", "rater", "--create")

    assert (out, err) == ("tom is a rater of aero.\n", "")
    assert User.objects.get(username="tom").check_password("pw") is True


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--collection", "nope", "--user", "tom", "--role", "trainer"),
            "--collection: no collection with slug 'nope'.",
        ),
        (
            ("--collection", "aero", "--user", "nobody", "--role", "trainer"),
            "--user: no user 'nobody'; add --create to make one.",
        ),
        (
            ("--collection", "aero", "--user", "tom", "--role", "boss"),
            "--role: 'boss' is not a role; use trainer (manages rankers, imports, trains) or rater "
            "(rates answers).",
        ),
        (
            ("--collection", "aero", "--user", "no spaces", "--role", "rater", "--create"),
            "--user: Enter a valid username. This value may contain only letters, numbers, and @/./+/-/_ "
            "characters.",
        ),
    ],
)
def test_add_member_bad_argument_is_named_and_nothing_changes(aero, args, message):
    User.objects.create_user("tom", password="pw")

    with pytest.raises(CommandError) as error:
        add_member(*args)

    assert str(error.value) == message
    assert (Membership.objects.count(), User.objects.count()) == (0, 1)


def test_add_member_bad_role_exits_non_zero_from_the_command_line(tmp_path):
    result = run(
        {"DEBUG": "1", "RANK_TRAINER_VAR_DIR": str(tmp_path)},
        args=("manage.py", "add_member", "--collection", "aero", "--user", "tom", "--role", "boss"),
    )

    assert result.returncode == 1
    assert result.stderr.splitlines()[-1] == (
        "CommandError: --role: 'boss' is not a role; use trainer (manages rankers, imports, trains) or "
        "rater (rates answers)."
    )
