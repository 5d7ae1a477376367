"""Issue an API token for a ranker service: ``Authorization: Token <key>`` in one collection."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from corpus.models import Collection, Role
from trainer.services import api_token_create


class Command(BaseCommand):
    help = (
        "Create an API token acting as USER in one collection, with the rater or trainer role. "
        "The key is printed once; only its hash is stored."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="collection slug")
        parser.add_argument(
            "--user", required=True, help="username the token acts as (a member of the collection)"
        )
        parser.add_argument("--role", choices=Role.values, default=Role.RATER)
        parser.add_argument("--name", default="", help="what the token is for, e.g. 'ranker service'")
        parser.add_argument(
            "--days", type=int, help="days until it expires (default API_TOKEN_DAYS; 0: never)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        collection = Collection.objects.filter(slug=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection with slug {options['collection']!r}")
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user {options['user']!r}")
        try:
            token, key = api_token_create(
                collection=collection,
                user=user,
                role=options["role"],
                name=options["name"],
                days=options["days"],
            )
        except ValidationError as exc:
            raise CommandError("; ".join(m for ms in exc.message_dict.values() for m in ms)) from exc
        self.stderr.write(
            f"Token {token.name!r} ({token.role} in {collection.slug}). Keep the key; it is not shown again:"
        )
        self.stdout.write(key)
