"""``manage.py ubi_import --queries FILE --events FILE``: NDJSON in the UBI schema (what ``ubi_export`` or
the OpenSearch plugin's indexes hold), all or nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ubi.records import Event, Query, RecordError, body_records, event_check, query_check
from ubi.services import ubi_records_import


class Command(BaseCommand):
    help = "Import UBI query and event records from NDJSON files (one record a line): all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--queries", help="NDJSON file of UBI query records")
        parser.add_argument("--events", help="NDJSON file of UBI event records")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["queries"] and not options["events"]:
            raise CommandError("give --queries FILE, --events FILE or both")
        queries: list[Query] = []
        events: list[Event] = []
        for name, check, into in (("queries", query_check, queries), ("events", event_check, events)):
            if not options[name]:
                continue
            path = Path(options[name])
            try:
                body = path.read_bytes()
                for where, record in body_records(body) if body.strip() else []:
                    try:
                        into.append(check(record))  # type: ignore[arg-type]
                    except RecordError as exc:
                        raise exc.at(where) from None
            except OSError as exc:
                raise CommandError(f"cannot read {path}: {exc.strerror}") from exc
            except RecordError as exc:
                raise CommandError(f"{path}: {exc}; nothing imported") from exc
        new_queries, new_events = ubi_records_import(queries=queries, events=events)
        self.stdout.write(
            f"imported {len(queries)} queries ({new_queries} new) and {len(events)} events ({new_events} new)"
        )
