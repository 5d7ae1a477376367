"""ubi.spool: the durable buffer, with the real store (PostgreSQL) behind it."""

from __future__ import annotations

import json
import os
import uuid

import pytest
from django.db import OperationalError

from ubi.models import UbiEvent, UbiQuery
from ubi.services import ubi_spooled_store
from ubi.spool import Drainer, Spool

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ubi_empty")]


def _query(query_id: str) -> dict:
    return {"query": {"query_id": query_id, "timestamp": "2026-11-29T00:00:00Z", "user_query": "flow"}}


def _event(ordinal: int) -> dict:
    return {
        "event": {
            "action_name": "click",
            "query_id": "q-1",
            "timestamp": "2026-11-29T00:00:01Z",
            "event_attributes": {"position": {"ordinal": ordinal}},
        },
        "event_id": str(uuid.uuid4()),
    }


def _store(records):
    ubi_spooled_store(records=records)


def test_spool_drain_while_the_store_fails_keeps_every_record_for_the_next_drain(tmp_path):
    spool = Spool(tmp_path)
    drainer = Drainer(tmp_path, owner=os.getpid())
    spool.append([_query("q-1"), _event(1)])
    spool.append([_event(2)])

    def down(records):
        raise OperationalError("connection refused")

    with pytest.raises(OperationalError):
        drainer.drain(down)
    pending = spool.pending_bytes()
    stored = drainer.drain(_store)

    assert pending > 0
    assert stored == 3
    assert spool.pending_bytes() == 0
    assert list(UbiQuery.objects.values_list("query_id", flat=True)) == ["q-1"]
    assert sorted(UbiEvent.objects.values_list("ordinal", flat=True)) == [1, 2]
    spool.close()  # the owner lets its file go: the next pass takes it whole and removes it
    assert drainer.drain(_store) == 0
    assert list(tmp_path.iterdir()) == []


def test_spool_of_a_dead_process_is_replayed_from_its_done_offset_once(tmp_path):
    first, second = json.dumps(_query("q-stored")) + "\n", json.dumps(_query("q-left")) + "\n"
    dead = tmp_path / "1-999999.ndjson"
    dead.write_text(first + second + '{"query": {"query_id": "cut sh')  # killed mid-way through a line
    (tmp_path / "1-999999.ndjson.done").write_text(str(len(first)))  # the first line was stored

    stored = Drainer(tmp_path, owner=os.getpid()).drain(_store)

    assert stored == 1
    assert list(UbiQuery.objects.values_list("query_id", flat=True)) == ["q-left"]
    assert not dead.exists()


def test_spool_replayed_twice_writes_each_row_once(tmp_path):
    spool = Spool(tmp_path)
    records = [_query("q-1"), _event(1)]
    spool.append(records)
    Drainer(tmp_path, owner=os.getpid()).drain(_store)
    _store(records)  # a crash between the commit and the .done write replays the batch

    assert (UbiQuery.objects.count(), UbiEvent.objects.count()) == (1, 1)
