"""``manage.py ubi_erase_client CLIENT_ID``: delete every logged query and event of one client."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from ubi.services import ubi_client_erase


class Command(BaseCommand):
    help = "Delete every UBI query and event of one client_id (a person's request to be forgotten)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("client_id")

    def handle(self, *args: Any, **options: Any) -> None:
        queries, events = ubi_client_erase(client_id=options["client_id"])
        self.stdout.write(f"erased client {options['client_id']!r}: {queries} queries, {events} events")
