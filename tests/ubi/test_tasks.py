"""ubi.tasks: beat's hourly retention job, run as the worker runs it (the task's function)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from ubi.models import UbiQuery
from ubi.records import query_check
from ubi.services import ubi_records_import
from ubi.tasks import ubi_expire

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("ubi_empty")]


def test_ubi_expire_deletes_past_the_retention_setting(settings):
    now = timezone.now()
    old = (now - timedelta(days=31)).isoformat()
    ubi_records_import(
        queries=[
            query_check({"query_id": "old", "timestamp": old}),
            query_check({"query_id": "new", "timestamp": now.isoformat()}),
        ],
        events=[],
    )
    settings.UBI_RETENTION_DAYS = 30

    assert ubi_expire() == [1, 0]
    assert list(UbiQuery.objects.values_list("query_id", flat=True)) == ["new"]
