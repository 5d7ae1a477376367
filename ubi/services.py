"""Writes of the UBI log: storing spooled or imported records, retention, erasing one client's rows."""

from __future__ import annotations

import json
import logging
import uuid
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import transaction

from ubi.models import UbiEvent, UbiQuery
from ubi.records import Event, Query, RecordError, event_check, query_check
from ubi.selectors import LOG_EPOCH_KEY

logger = logging.getLogger(__name__)

# Imported events have no id of ours: one derived from their content makes a second import of the
# same file write nothing new.
IMPORT_NAMESPACE = uuid.UUID("6f1c3a52-3f0e-4a43-9d7e-2a0d5c1b9e11")


def user_id_kept(user_id: str) -> str:
    """``user_id`` as stored: dropped unless the operator turned UBI_STORE_USER_ID on."""
    return user_id if settings.UBI_STORE_USER_ID else ""


def _query_row(query: Query) -> UbiQuery:
    return UbiQuery(
        query_id=query.query_id,
        application=query.application,
        client_id=query.client_id,
        user_id=user_id_kept(query.user_id),
        user_query=query.user_query,
        query_response_id=query.query_response_id,
        query_response_hit_ids=query.query_response_hit_ids,
        query_attributes=query.query_attributes,
        object_id_field=query.object_id_field,
        timestamp=query.timestamp,
        extra=query.extra,
    )


def _event_row(event: Event, event_id: uuid.UUID) -> UbiEvent:
    return UbiEvent(
        event_id=event_id,
        application=event.application,
        action_name=event.action_name,
        query_id=event.query_id,
        session_id=event.session_id,
        client_id=event.client_id,
        user_id=user_id_kept(event.user_id),
        timestamp=event.timestamp,
        message_type=event.message_type,
        message=event.message,
        event_attributes=event.event_attributes,
        ordinal=event.ordinal,
        object_id=event.object_id,
    )


def ubi_rows_store(*, queries: list[UbiQuery], events: list[UbiEvent]) -> None:
    """Insert in one transaction; a row whose ``query_id`` (query) or ``event_id`` (event) is stored
    already is left as it is (a replay of the spool or a second import)."""
    with transaction.atomic():
        UbiQuery.objects.bulk_create(queries, ignore_conflicts=True, batch_size=500)
        UbiEvent.objects.bulk_create(events, ignore_conflicts=True, batch_size=500)


def ubi_spooled_store(*, records: list[dict[str, Any]]) -> None:
    """Store a batch of spool lines (``{"query": {...}}`` or ``{"event": {...}, "event_id": "..."}``),
    checked when they were accepted; a line that fails the checks now is logged, not stored."""
    queries, events = [], []
    for record in records:
        try:
            if "query" in record:
                queries.append(_query_row(query_check(record["query"])))
            else:
                events.append(_event_row(event_check(record["event"]), uuid.UUID(record["event_id"])))
        except (RecordError, KeyError, ValueError, TypeError) as exc:
            logger.error(
                "ubi spool: a line that is not a UBI record was not stored (%s): %.300r", exc, record
            )
    ubi_rows_store(queries=queries, events=events)


def ubi_records_import(*, queries: list[Query], events: list[Event]) -> tuple[int, int]:
    """Store checked records from an import (NDJSON files, OpenSearch indexes): all or none. Returns how
    many queries and events were new."""
    before = UbiQuery.objects.count(), UbiEvent.objects.count()
    rows = []
    for event in events:
        key = json.dumps(
            [
                event.action_name,
                event.query_id,
                event.client_id,
                event.session_id,
                event.timestamp.isoformat(),
                event.event_attributes,
            ],
            sort_keys=True,
            default=str,
        )
        rows.append(_event_row(event, uuid.uuid5(IMPORT_NAMESPACE, key)))
    ubi_rows_store(queries=[_query_row(q) for q in queries], events=rows)
    return UbiQuery.objects.count() - before[0], UbiEvent.objects.count() - before[1]


def ubi_rows_expire(*, now: datetime, days: int) -> tuple[int, int]:
    """Delete queries and events older than ``days`` days before ``now`` (0: keep everything). Returns
    the queries and events deleted."""
    if days <= 0:
        return 0, 0
    cutoff = now - timedelta(days=days)
    queries, _ = UbiQuery.objects.filter(timestamp__lt=cutoff).delete()
    events, _ = UbiEvent.objects.filter(timestamp__lt=cutoff).delete()
    if queries or events:
        ubi_log_epoch_move()
    return queries, events


def ubi_client_erase(*, client_id: str) -> tuple[int, int]:
    """Delete every query and event of one ``client_id`` (a person's request to be forgotten). Returns the
    queries and events deleted."""
    with transaction.atomic():
        queries, _ = UbiQuery.objects.filter(client_id=client_id).delete()
        events, _ = UbiEvent.objects.filter(client_id=client_id).delete()
    if queries or events:
        ubi_log_epoch_move()
    return queries, events


def ubi_log_epoch_move() -> None:
    """Say that rows left the log (``ubi.selectors.log_epoch``): what was read of it incrementally (an
    online test's running totals) is read again from scratch. Rows only added need no word: readers
    follow the ids."""
    cache.set(LOG_EPOCH_KEY, uuid.uuid4().hex, None)
