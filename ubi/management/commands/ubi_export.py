"""``manage.py ubi_export --queries FILE --events FILE``: the log as NDJSON, one UBI record a line."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ubi.selectors import event_records, query_records


class Command(BaseCommand):
    help = "Write the UBI log as two NDJSON files (queries, events) in the UBI 1.3.0 schema."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--queries", help="file for the query records")
        parser.add_argument("--events", help="file for the event records")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["queries"] and not options["events"]:
            raise CommandError("give --queries FILE, --events FILE or both")
        for name, records in (("queries", query_records), ("events", event_records)):
            if options[name]:
                count = 0
                with open(options[name], "w", encoding="utf-8") as out:
                    for record in records():
                        out.write(json.dumps(record, ensure_ascii=False) + "\n")
                        count += 1
                self.stdout.write(f"wrote {count} {name} to {options[name]}")
