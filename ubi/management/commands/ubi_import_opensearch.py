"""``manage.py ubi_import_opensearch --url URL``: bring a team's UBI log from its OpenSearch indexes
(``ubi_queries``, ``ubi_events``, as the UBI plugin writes them), all or nothing."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from ubi.opensearch import OpenSearchError, index_documents
from ubi.records import Event, Query, RecordError, event_check, query_check
from ubi.services import ubi_records_import


class Command(BaseCommand):
    help = "Import UBI queries and events from OpenSearch's ubi_queries / ubi_events indexes: all or nothing."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", required=True, help="the OpenSearch node, e.g. https://search:9200")
        parser.add_argument("--queries-index", default="ubi_queries")
        parser.add_argument("--events-index", default="ubi_events")
        parser.add_argument(
            "--header",
            action="append",
            default=[],
            metavar="NAME: VALUE",
            help="e.g. 'Authorization: Basic ...'",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        headers = {}
        for header in options["header"]:
            name, sep, value = header.partition(":")
            if not sep or not name.strip():
                raise CommandError(f"--header must be 'NAME: VALUE', not {header!r}")
            headers[name.strip()] = value.strip()
        queries: list[Query] = []
        events: list[Event] = []
        for index, check, into in (
            (options["queries_index"], query_check, queries),
            (options["events_index"], event_check, events),
        ):
            try:
                for doc_id, source in index_documents(options["url"], index, headers=headers):
                    try:
                        into.append(check(source))  # type: ignore[arg-type]
                    except RecordError as exc:
                        raise CommandError(f"{index} document {doc_id}: {exc}; nothing imported") from exc
            except OpenSearchError as exc:
                raise CommandError(f"{exc}; nothing imported") from exc
        new_queries, new_events = ubi_records_import(queries=queries, events=events)
        self.stdout.write(
            f"imported {len(queries)} queries ({new_queries} new) and {len(events)} events ({new_events} new) "
            f"from {options['url']}"
        )
