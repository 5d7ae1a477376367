"""ubi.services: privacy (user_id, retention, erasing a client) and imports, on real PostgreSQL."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ubi.models import UbiEvent, UbiQuery
from ubi.records import event_check, query_check
from ubi.selectors import orphan_events
from ubi.services import ubi_client_erase, ubi_records_import, ubi_rows_expire

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ubi_empty")]


def _query(query_id: str, client_id: str, timestamp: str, **fields):
    return query_check({"query_id": query_id, "client_id": client_id, "timestamp": timestamp, **fields})


def _event(query_id: str, client_id: str, timestamp: str, **fields):
    record = {"action_name": "click", "query_id": query_id, "client_id": client_id, "timestamp": timestamp}
    return event_check({**record, **fields})


def _log():
    ubi_records_import(
        queries=[
            _query("q-old", "c-1", "2026-08-01T00:00:00Z"),
            _query("q-new", "c-2", "2026-11-28T00:00:00Z"),
        ],
        events=[
            _event("q-old", "c-1", "2026-08-01T00:00:05Z"),
            _event("q-new", "c-2", "2026-11-28T00:00:05Z"),
            _event("q-gone", "c-2", "2026-11-28T00:00:06Z"),
        ],
    )


def test_ubi_rows_expire_deletes_rows_older_than_the_retention():
    _log()

    deleted = ubi_rows_expire(now=datetime(2026, 11, 29, tzinfo=UTC), days=90)

    assert deleted == (1, 1)
    assert list(UbiQuery.objects.values_list("query_id", flat=True)) == ["q-new"]
    assert ubi_rows_expire(now=datetime(2030, 1, 1, tzinfo=UTC), days=0) == (0, 0)


def test_ubi_client_erase_deletes_that_clients_queries_and_events_only():
    _log()

    assert ubi_client_erase(client_id="c-2") == (1, 2)
    assert list(UbiEvent.objects.values_list("client_id", flat=True)) == ["c-1"]


def test_ubi_records_import_twice_writes_nothing_new_and_counts_orphans():
    _log()
    _log()

    assert (UbiQuery.objects.count(), UbiEvent.objects.count()) == (2, 3)
    assert list(orphan_events().values_list("query_id", flat=True)) == ["q-gone"]


def test_user_id_is_dropped_unless_the_setting_keeps_it(settings):
    ubi_records_import(queries=[_query("q-1", "c", "2026-11-28T00:00:00Z", user_id="u-1")], events=[])
    settings.UBI_STORE_USER_ID = True
    ubi_records_import(queries=[_query("q-2", "c", "2026-11-28T00:00:00Z", user_id="u-1")], events=[])

    assert dict(UbiQuery.objects.values_list("query_id", "user_id")) == {"q-1": "", "q-2": "u-1"}
