"""Reads of the UBI log: counts (orphan events) and the rows in the spec's shape, for export."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from django.core.cache import cache
from django.db.models import Exists, OuterRef

from ubi.models import UbiEvent, UbiQuery
from ubi.records import event_record, query_record

# The log's deletions marker (ubi.services.ubi_log_epoch_move), in the cache beside what is read with it.
LOG_EPOCH_KEY = "ubi:log-epoch"


def log_epoch() -> str:
    """A token that changes whenever rows leave the log (retention, a client's erasure). A reader that
    keeps what it read of the log incrementally keeps it only under the same token. A missing token (the
    cache cleared, evicted or away) is replaced by a new one, so nothing read before it is trusted."""
    token = cache.get(LOG_EPOCH_KEY)
    if token is None:
        cache.add(LOG_EPOCH_KEY, uuid.uuid4().hex, None)
        token = cache.get(LOG_EPOCH_KEY)
    return token or ""


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
