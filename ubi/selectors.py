"""Reads of the UBI log: counts (orphan events) and the rows in the spec's shape, for export."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Exists, OuterRef

from ubi.models import UbiEvent, UbiQuery
from ubi.records import event_record, query_record


def orphan_events():
    """Events naming a ``query_id`` that no stored query has (an event without one is not an orphan)."""
    known = UbiQuery.objects.filter(query_id=OuterRef("query_id"))
    return UbiEvent.objects.exclude(query_id="").filter(~Exists(known))


def query_records() -> Iterator[dict[str, Any]]:
    for row in UbiQuery.objects.order_by("timestamp", "id").iterator(chunk_size=2000):
        yield query_record(row)


def event_records() -> Iterator[dict[str, Any]]:
    for row in UbiEvent.objects.order_by("timestamp", "id").iterator(chunk_size=2000):
        yield event_record(row)
