"""The UBI tests' shared fixture: tables seen empty by the tests that count rows."""

from __future__ import annotations

import pytest

from ubi.models import UbiEvent, UbiQuery


@pytest.fixture
def ubi_empty(db) -> None:
    """Every ranker_server of a test run logs into the worker's database (committed rows, from other
    files' tests too): a test counting rows starts from none, inside its transaction (rolled back after)."""
    UbiQuery.objects.all().delete()
    UbiEvent.objects.all().delete()
