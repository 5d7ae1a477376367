"""Make a user a trainer or a rater of a collection, from a script: no browser, no superuser needed."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction

from corpus.models import Collection, Role
from corpus.services import membership_set


class Command(BaseCommand):
    help = (
        "Make USER a trainer or a rater of the collection SLUG (a member already changes role). "
        "--create makes the user first, without a password (it prints how to set one)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, metavar="SLUG", help="collection slug")
        parser.add_argument("--user", required=True, metavar="USERNAME", help="username")
        parser.add_argument("--role", required=True, help=f"one of: {', '.join(Role.values)}")
        parser.add_argument(
            "--create", action="store_true", help="make the user when there is none of this name"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        slug, username, role = options["collection"], options["user"], options["role"]
        # Checked here, not with argparse's choices, so the message says what the roles are for.
        if role not in Role.values:
            raise CommandError(
                f"--role: {role!r} is not a role; use trainer (manages rankers, imports, trains) or rater "
                "(rates answers)."
            )
        collection = Collection.objects.filter(slug=slug).first()
        if collection is None:
            raise CommandError(f"--collection: no collection with slug {slug!r}.")
        users = get_user_model()
        user = users.objects.filter(username=username).first()
        created = False
        if user is None and not options["create"]:
            raise CommandError(f"--user: no user {username!r}; add --create to make one.")
        with transaction.atomic():
            if user is None:
                user = users(username=username)
                user.set_unusable_password()  # signs in only once someone sets one
                try:
                    user.full_clean(exclude=["password"])
                except ValidationError as exc:
                    messages = [m for ms in exc.message_dict.values() for m in ms]
                    raise CommandError(f"--user: {' '.join(messages)}") from None
                user.save()
                created = True
            previous = collection.memberships.filter(user=user).values_list("role", flat=True).first()
            membership_set(collection=collection, user=user, role=role)
        if created:
            self.stderr.write(
                f"Created user {username!r} without a password; set one with: "
                f"python manage.py changepassword {username}"
            )
        change = f" (was {previous})" if previous and previous != role else ""
        self.stdout.write(f"{username} is a {role} of {collection.slug}{change}.")
