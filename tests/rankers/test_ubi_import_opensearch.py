"""``manage.py ubi_import_opensearch`` against the real OpenSearch node (tests/rankers/real_engines.py):
the two UBI indexes created with the plugin's mappings and written as the plugin writes them (queries with
an epoch-millisecond timestamp, events as clients post them), imported, then exported as NDJSON."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command

from tests.http_client import HTTP
from ubi.models import UbiEvent, UbiQuery
from ubi.opensearch import EVENTS_MAPPING, QUERIES_MAPPING

pytestmark = pytest.mark.django_db

QUERY = {
    "query_id": "7ae52966-4fd4-4ab1-8152-0fd0b52bdadf",
    "user_query": "supersonic boundary layer",
    "client_id": "c-7",
    "timestamp": 1764374400123,  # the plugin writes epoch milliseconds
    "query_response_id": "r-7",
    "query_response_hit_ids": ["184", "29", "12"],
    "query_attributes": {"model": "v3"},
    "query": '{"query":{"match":{"text":"supersonic boundary layer"}}}',
    "indexes": ["cranfield"],
}
EVENT = {
    "application": "cranfield-search",
    "action_name": "click",
    "query_id": QUERY["query_id"],
    "session_id": "s-7",
    "client_id": "c-7",
    "timestamp": "2025-11-29T00:00:03.500Z",
    "message_type": "CLICK",
    "event_attributes": {"object": {"object_id": "29", "object_id_field": "id"}, "position": {"ordinal": 2}},
}


@pytest.fixture
def ubi_indexes(opensearch):
    # Every ranker_server of the run logs into this database: count from none (rolled back after).
    UbiQuery.objects.all().delete()
    UbiEvent.objects.all().delete()
    for index, mapping, doc in (
        ("ubi_queries", QUERIES_MAPPING, QUERY),
        ("ubi_events", EVENTS_MAPPING, EVENT),
    ):
        HTTP.put(
            f"{opensearch.url}/{index}", json={"settings": {"number_of_replicas": 0}, "mappings": mapping}
        )
        response = HTTP.post(f"{opensearch.url}/{index}/_doc", params={"refresh": "true"}, json=doc)
        assert response.status_code == 201, response.text
    yield opensearch
    for index in ("ubi_queries", "ubi_events"):
        HTTP.delete(f"{opensearch.url}/{index}")


def test_ubi_import_opensearch_reads_both_indexes_and_exports_them_in_the_same_schema(ubi_indexes, tmp_path):
    call_command("ubi_import_opensearch", url=ubi_indexes.url)
    call_command("ubi_import_opensearch", url=ubi_indexes.url)  # again: nothing new
    call_command("ubi_export", queries=str(tmp_path / "q.ndjson"), events=str(tmp_path / "e.ndjson"))

    assert (UbiQuery.objects.count(), UbiEvent.objects.count()) == (1, 1)
    event = UbiEvent.objects.get()
    assert (event.ordinal, event.object_id) == (2, "29")
    assert json.loads((tmp_path / "q.ndjson").read_text()) == {
        **QUERY,
        "timestamp": "2025-11-29T00:00:00.123Z",
    }
    assert json.loads((tmp_path / "e.ndjson").read_text()) == EVENT


def test_ubi_import_opensearch_missing_index_imports_nothing(ubi_indexes):
    with pytest.raises(
        CommandError, match=r"searching nope: HTTP 404: .*index_not_found_exception.*; nothing imported"
    ):
        call_command("ubi_import_opensearch", url=ubi_indexes.url, events_index="nope")

    assert UbiQuery.objects.count() == 0
