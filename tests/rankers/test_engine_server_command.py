"""`manage.py engine_server`: a collection's answers as a stand-in Elasticsearch index and Solr core, in a
real subprocess."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import httpx
import pytest
from django.core.management import CommandError, call_command

from tests.conftest import ROOT, _database_url_for_tests
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import RankerServer, free_port


@pytest.fixture(scope="module")
def engine_process(served):
    port = free_port()
    env = {
        **os.environ,
        "DATABASE_URL": _database_url_for_tests(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
    }
    log_path = served.log_dir / f"engine-server-{port}.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "engine_server", "--collection", "served", "--port", str(port)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = RankerServer(url=f"http://127.0.0.1:{port}", process=process, log_path=log_path)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"engine_server exited early:\n{server.log()}")
        try:
            if httpx.get(f"{server.url}/healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.1)
    yield server
    server.stop()


def test_engine_server_command_serves_the_collection_as_an_index(engine_process):
    response = httpx.post(
        f"{engine_process.url}/served/_search",
        json={"size": 2, "query": {"match": {"text": "boundary layer"}}},
    )

    assert response.status_code == 200
    hits = response.json()["hits"]["hits"]
    assert [hit["_index"] for hit in hits] == ["served", "served"]
    assert hits[0]["_id"] == "a1"
    assert "served (4 answers)" in engine_process.log()


def test_engine_server_command_serves_the_collection_as_a_solr_core(engine_process):
    response = httpx.get(
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
