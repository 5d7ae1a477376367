"""manage.py ubi_export / ubi_import / ubi_erase_client / ubi_expire."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from ubi.models import UbiEvent, UbiQuery

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ubi_empty")]

QUERIES = [
    {
        "query_id": "q-1",
        "timestamp": "2026-11-28T10:00:00.000Z",
        "application": "shop",
        "client_id": "c-1",
        "user_query": "laptop",
        "query_response_id": "r-1",
        "object_id_field": "sku",
        "query_response_hit_ids": ["s3", "s1", "s2"],
        "query_attributes": {"version": "v2"},
        "query": '{"match": {"title": "laptop"}}',
        "indexes": ["products"],
    }
]
EVENTS = [
    {
        "action_name": "click",
        "timestamp": "2026-11-28T10:00:05.250Z",
        "application": "shop",
        "query_id": "q-1",
        "session_id": "s-1",
        "client_id": "c-1",
        "message_type": "CLICK",
        "message": "clicked s1",
        "event_attributes": {
            "object": {"object_id": "s1", "object_id_field": "sku"},
            "position": {"ordinal": 2},
        },
    }
]


def _ndjson(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return str(path)


def test_ubi_import_then_export_gives_the_same_records(tmp_path):
    call_command(
        "ubi_import",
        queries=_ndjson(tmp_path / "q.ndjson", QUERIES),
        events=_ndjson(tmp_path / "e.ndjson", EVENTS),
    )
    call_command("ubi_export", queries=str(tmp_path / "q2.ndjson"), events=str(tmp_path / "e2.ndjson"))

    assert [json.loads(line) for line in (tmp_path / "q2.ndjson").read_text().splitlines()] == QUERIES
    assert [json.loads(line) for line in (tmp_path / "e2.ndjson").read_text().splitlines()] == EVENTS


def test_ubi_import_bad_line_imports_nothing(tmp_path):
    bad = [*EVENTS, {**EVENTS[0], "timestamp": "yesterday"}]

    with pytest.raises(
        CommandError,
        match=r"line 2: \"timestamp\" is not an ISO-8601 date and time: 'yesterday'; nothing imported",
    ):
        call_command(
            "ubi_import",
            queries=_ndjson(tmp_path / "q.ndjson", QUERIES),
            events=_ndjson(tmp_path / "e.ndjson", bad),
        )

    assert (UbiQuery.objects.count(), UbiEvent.objects.count()) == (0, 0)


def test_ubi_erase_client_and_expire_commands(tmp_path, capsys):
    call_command(
        "ubi_import",
        queries=_ndjson(tmp_path / "q.ndjson", QUERIES),
        events=_ndjson(tmp_path / "e.ndjson", EVENTS),
    )

    call_command("ubi_expire", days=0)
    call_command("ubi_erase_client", "c-1")

    assert capsys.readouterr().out.splitlines()[-2:] == [
        "deleted 0 queries and 0 events older than 0 days",
        "erased client 'c-1': 1 queries, 1 events",
    ]
    assert (UbiQuery.objects.count(), UbiEvent.objects.count()) == (0, 0)
