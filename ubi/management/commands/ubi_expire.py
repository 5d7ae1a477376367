"""``manage.py ubi_expire [--days N]``: delete queries and events past the retention (what beat runs hourly)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from ubi.services import ubi_rows_expire


class Command(BaseCommand):
    help = "Delete UBI queries and events older than UBI_RETENTION_DAYS (or --days)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--days", type=int, help="default: UBI_RETENTION_DAYS (0 keeps everything)")

    def handle(self, *args: Any, **options: Any) -> None:
        days = settings.UBI_RETENTION_DAYS if options["days"] is None else options["days"]
        queries, events = ubi_rows_expire(now=timezone.now(), days=days)
        self.stdout.write(f"deleted {queries} queries and {events} events older than {days} days")
