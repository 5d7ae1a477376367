"""`manage.py engine_server`: a collection's answers as a stand-in Elasticsearch index and Solr core, in a
real subprocess."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from tests.http_client import HTTP
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.servers import start_engine_server


@pytest.fixture(scope="module")
def engine_process(served):
    server = start_engine_server(served.slug, served.log_dir)
    yield server
    server.stop()


def test_engine_server_command_serves_the_collection_as_an_index(engine_process):
    response = HTTP.post(
        f"{engine_process.url}/served/_search",
        json={"size": 2, "query": {"match": {"text": "boundary layer"}}},
    )

    assert response.status_code == 200
    hits = response.json()["hits"]["hits"]
    assert [hit["_index"] for hit in hits] == ["served", "served"]
    assert hits[0]["_id"] == "a1"
    assert "served (4 answers)" in engine_process.log()


def test_engine_server_command_serves_the_collection_as_a_solr_core(engine_process):
    response = HTTP.get(
        f"{engine_process.url}/solr/served/select",
        params={"q": "boundary layer", "fl": "id,score", "rows": 1},
    )

    docs = response.json()["response"]["docs"]
    assert [set(doc) for doc in docs] == [{"id", "score"}]
    assert docs[0]["id"] == "a1"


@pytest.mark.django_db
def test_engine_server_command_unknown_collection_is_an_error():
    with pytest.raises(CommandError, match="no collection with slug 'nope'"):
        call_command("engine_server", "--collection", "nope", "--port", "0")


@pytest.mark.django_db
def test_engine_server_command_bad_error_status_is_an_error(collection):
    with pytest.raises(CommandError, match="--error-status must be from 400 to 599"):
        call_command("engine_server", "--collection", collection.slug, "--error-status", "200")
