"""UBI 1.3.0 records as JSON: reading a body of events (one, a list, or NDJSON), checking each query or
event field by field, and writing rows back in the spec's shape. Pure functions, no database.

A check that fails is a ``RecordError`` naming the field and where it is (``index`` in a JSON list,
``line`` in NDJSON, 1-based), so a caller fixes the one thing that is wrong.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

MAX_ID_CHARS = 100  # query_id, client_id, session_id, user_id, action_name: the plugin's keyword limit
MAX_OBJECT_ID_CHARS = 256
MAX_MESSAGE_CHARS = 1024

EVENT_FIELDS = (
    "application",
    "action_name",
    "query_id",
    "session_id",
    "client_id",
    "user_id",
    "timestamp",
    "message_type",
    "message",
    "event_attributes",
)
QUERY_FIELDS = (
    "application",
    "query_id",
    "client_id",
    "user_id",
    "user_query",
    "query_response_id",
    "query_response_hit_ids",
    "query_attributes",
    "object_id_field",
    "timestamp",
)
# The OpenSearch plugin's own fields of a query document: kept as they are, exported back.
QUERY_PLUGIN_FIELDS = ("query", "indexes")


class RecordError(ValueError):
    """A record that is not UBI: ``field`` is its dotted name, ``where`` e.g. "line 3" or "index 0"."""

    def __init__(self, field: str, problem: str, where: str = "") -> None:
        self.field, self.problem, self.where = field, problem, where
        super().__init__(f'{where + ": " if where else ""}"{field}" {problem}')

    def at(self, where: str) -> RecordError:
        return RecordError(self.field, self.problem, where)


def parse_timestamp(value: Any, field: str = "timestamp") -> datetime:
    """An ISO-8601 date and time with its UTC offset ("Z" or "+02:00"), or a whole number of milliseconds
    since 1970 (UTC by definition, as the plugin's ``epoch_millis``). A time without offset is refused:
    whose local time it was is unknown."""
    if isinstance(value, int) and not isinstance(value, bool):
        return datetime.fromtimestamp(value / 1000, tz=UTC)
    if not isinstance(value, str):
        raise RecordError(field, "must be an ISO-8601 date and time with its UTC offset")
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        raise RecordError(field, f"is not an ISO-8601 date and time: {value[:40]!r}") from None
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        raise RecordError(field, f"has no UTC offset (add 'Z' or '+00:00'): {value[:40]!r}")
    return parsed.astimezone(UTC)


def format_timestamp(value: datetime) -> str:
    """The one way timestamps are written back: UTC, milliseconds, "Z"."""
    return value.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _text(record: dict, name: str, limit: int, *, required: bool = False) -> str:
    value = record.get(name)
    if value is None:
        if required:
            raise RecordError(name, "is missing")
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise RecordError(name, "must be a string")
    text = str(value)
    if required and not text.strip():
        raise RecordError(name, "must not be empty")
    if len(text) > limit:
        raise RecordError(name, f"is longer than {limit} characters")
    return text


def _unknown(record: dict, known: tuple[str, ...], what: str) -> None:
    for name in record:
        if name not in known:
            raise RecordError(name, f"is not a field of a UBI {what} ({', '.join(known)})")


@dataclass(frozen=True)
class Event:
    """A checked event: the row's columns (``timestamp`` a UTC datetime, ``ordinal`` and ``object_id``
    copied out of ``event_attributes``)."""

    application: str
    action_name: str
    query_id: str
    session_id: str
    client_id: str
    user_id: str
    timestamp: datetime
    message_type: str
    message: str
    event_attributes: dict
    ordinal: int | None
    object_id: str


def event_check(record: Any) -> Event:
    """One UBI event checked: ``action_name`` and ``timestamp`` required; ``event_attributes.position.
    ordinal`` a whole number ≥ 1 when given; ``event_attributes.object.object_id`` text when given."""
    if not isinstance(record, dict):
        raise RecordError("event", "must be a JSON object")
    _unknown(record, EVENT_FIELDS, "event")
    action = _text(record, "action_name", MAX_ID_CHARS, required=True)
    if "timestamp" not in record:
        raise RecordError("timestamp", "is missing")
    timestamp = parse_timestamp(record["timestamp"])
    attributes = record.get("event_attributes") or {}
    if not isinstance(attributes, dict):
        raise RecordError("event_attributes", "must be an object")
    ordinal: int | None = None
    position = attributes.get("position")
    if position is not None:
        if not isinstance(position, dict):
            raise RecordError("event_attributes.position", "must be an object")
        if position.get("ordinal") is not None:
            ordinal = position["ordinal"]
            if isinstance(ordinal, bool) or not isinstance(ordinal, int) or ordinal < 1:
                raise RecordError("event_attributes.position.ordinal", "must be a whole number, 1 or more")
    object_id = ""
    obj = attributes.get("object")
    if obj is not None:
        if not isinstance(obj, dict):
            raise RecordError("event_attributes.object", "must be an object")
        try:
            object_id = _text(obj, "object_id", MAX_OBJECT_ID_CHARS)
        except RecordError as exc:
            raise RecordError("event_attributes.object.object_id", exc.problem) from None
    return Event(
        application=_text(record, "application", 256),
        action_name=action,
        query_id=_text(record, "query_id", MAX_ID_CHARS),
        session_id=_text(record, "session_id", MAX_ID_CHARS),
        client_id=_text(record, "client_id", MAX_ID_CHARS),
        user_id=_text(record, "user_id", MAX_ID_CHARS),
        timestamp=timestamp,
        message_type=_text(record, "message_type", MAX_ID_CHARS),
        message=_text(record, "message", MAX_MESSAGE_CHARS),
        event_attributes=attributes,
        ordinal=ordinal,
        object_id=object_id,
    )


@dataclass(frozen=True)
class Query:
    application: str
    query_id: str
    client_id: str
    user_id: str
    user_query: str
    query_response_id: str
    query_response_hit_ids: list[str]
    query_attributes: dict
    object_id_field: str
    timestamp: datetime
    extra: dict


def query_check(record: Any) -> Query:
    """One UBI query record checked: ``query_id`` and ``timestamp`` required, hit ids a list of ids."""
    if not isinstance(record, dict):
        raise RecordError("query", "must be a JSON object")
    _unknown(record, QUERY_FIELDS + QUERY_PLUGIN_FIELDS, "query")
    query_id = _text(record, "query_id", MAX_ID_CHARS, required=True)
    if "timestamp" not in record:
        raise RecordError("timestamp", "is missing")
    timestamp = parse_timestamp(record["timestamp"])
    hits = record.get("query_response_hit_ids") or []
    if isinstance(hits, str):
        hits = [hits]  # a keyword field with one value comes back as that value
    if not isinstance(hits, list) or any(isinstance(h, bool) or not isinstance(h, str | int) for h in hits):
        raise RecordError("query_response_hit_ids", "must be a list of ids")
    attributes = record.get("query_attributes") or {}
    if not isinstance(attributes, dict):
        raise RecordError("query_attributes", "must be an object")
    user_query = record.get("user_query", "")
    if not isinstance(user_query, str):
        raise RecordError("user_query", "must be a string")
    return Query(
        application=_text(record, "application", 256),
        query_id=query_id,
        client_id=_text(record, "client_id", MAX_ID_CHARS),
        user_id=_text(record, "user_id", MAX_ID_CHARS),
        user_query=user_query,
        query_response_id=_text(record, "query_response_id", MAX_ID_CHARS),
        query_response_hit_ids=[str(h) for h in hits],
        query_attributes=attributes,
        object_id_field=_text(record, "object_id_field", MAX_ID_CHARS),
        timestamp=timestamp,
        extra={name: record[name] for name in QUERY_PLUGIN_FIELDS if name in record},
    )


def body_records(body: bytes) -> list[tuple[str, Any]]:
    """The JSON values of a body: one object, a JSON list of them, or NDJSON (one per line), each with
    where it is ("index 2", "line 3"; "" for a single object). RecordError when the body is none of these."""
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise RecordError("body", "must be UTF-8") from None
    stripped = text.strip()
    if not stripped:
        raise RecordError("body", "is empty: send one event, a JSON list of events, or NDJSON")
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        value = None
        lines = []
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                lines.append((f"line {number}", json.loads(line)))
            except json.JSONDecodeError as exc:
                raise RecordError("body", f"is not JSON ({exc.msg})", f"line {number}") from None
        return lines
    if isinstance(value, list):
        return [(f"index {i}", item) for i, item in enumerate(value)]
    return [("", value)]


def events_check(body: bytes) -> list[Event]:
    """Every event of a body checked, or the first RecordError (with its line or index): all or none."""
    events = []
    for where, record in body_records(body):
        try:
            events.append(event_check(record))
        except RecordError as exc:
            raise exc.at(where) from None
    if not events:
        raise RecordError("body", "has no events")
    return events


def query_record(row: Any) -> dict[str, Any]:
    """A query row (``ubi.models.UbiQuery`` or ``Query``) in the spec's JSON shape, empty fields left out."""
    record: dict[str, Any] = {"query_id": row.query_id, "timestamp": format_timestamp(row.timestamp)}
    for name in ("application", "client_id", "user_id", "user_query", "query_response_id", "object_id_field"):
        if getattr(row, name):
            record[name] = getattr(row, name)
    record["query_response_hit_ids"] = list(row.query_response_hit_ids)
    record["query_attributes"] = dict(row.query_attributes)
    record.update(row.extra or {})
    return record


def event_record(row: Any) -> dict[str, Any]:
    """An event row in the spec's JSON shape, empty fields left out."""
    record: dict[str, Any] = {"action_name": row.action_name, "timestamp": format_timestamp(row.timestamp)}
    for name in ("application", "query_id", "session_id", "client_id", "user_id", "message_type", "message"):
        if getattr(row, name):
            record[name] = getattr(row, name)
    if row.event_attributes:
        record["event_attributes"] = row.event_attributes
    return record
