"""The admin's action erasing the selected rows' clients (a person's request to be forgotten)."""

from __future__ import annotations

import pytest

from ubi.models import UbiEvent, UbiQuery
from ubi.records import event_check, query_check
from ubi.services import ubi_records_import

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ubi_empty")]


def _log() -> None:
    at = "2026-11-28T00:00:00Z"
    ubi_records_import(
        queries=[
            query_check({"query_id": f"q-{c}", "client_id": c, "timestamp": at}) for c in ("c-1", "c-2")
        ],
        events=[
            event_check({"action_name": "click", "query_id": "q-1", "client_id": "c-1", "timestamp": at})
        ],
    )


def test_admin_erase_clients_action_deletes_their_queries_and_events(client, make_user):
    _log()
    client.force_login(make_user("root", is_staff=True, is_superuser=True))
    chosen = UbiQuery.objects.get(client_id="c-1")

    response = client.post(
        "/admin/ubi/ubiquery/", {"action": "erase_clients", "_selected_action": [chosen.pk]}, follow=True
    )

    assert response.status_code == 200
    assert "Erased 1 client(s): 1 queries and 1 events." in response.content.decode()
    assert list(UbiQuery.objects.values_list("client_id", flat=True)) == ["c-2"]
    assert UbiEvent.objects.count() == 0


def test_admin_erase_clients_action_is_refused_to_a_non_staff_user(client, make_user):
    _log()
    client.force_login(make_user("rater"))

    response = client.post("/admin/ubi/ubiquery/", {"action": "erase_clients", "_selected_action": [1]})

    assert response.status_code == 302  # to the admin's login page
    assert UbiQuery.objects.count() == 2
