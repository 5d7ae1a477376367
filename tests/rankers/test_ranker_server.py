"""`manage.py ranker_server`: the reference HTTP ranker, in a real subprocess."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.core.management import CommandError, call_command

from rankers.export.spec import vector_values
from rankers.semantic import question_vectors
from tests.http_client import HTTP
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers


@pytest.fixture(scope="module")
def server(served, request):
    return served.shared(request)  # the plain BM25 server, shared with the other modules here


def test_ranker_server_healthz_describes_what_it_serves(server):
    response = HTTP.get(server.url + "healthz")

    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "collection": "served",
        "answers": 4,
        "ranker": "BM25",
        "version": None,
        "uses_model": False,
    }


def test_ranker_server_ranks_a_question(server):
    response = HTTP.post(
        server.url, json={"question": {"id": "q1", "text": "boundary layer flows"}, "rows": 2}
    )

    assert response.status_code == 200
    answers = response.json()["answers"]
    assert [a["id"] for a in answers] == ["a1", "a4"]
    assert answers[0]["score"] > answers[1]["score"] > 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        (b"not json", "body must be JSON"),
        (b"[]", '"question" must be an object'),
        (b'{"question": {"id": "q1"}}', '"question.text" must be a string'),
        (b'{"question": {"id": null, "text": "x"}}', '"question.id" must be a string'),
        (
            b'{"question": {"id": "q1", "text": "x"}, "rows": 0}',
            '"rows" must be a whole number from 1 to 1000',
        ),
        (b'{"question": {"id": "q1", "text": "x"}, "rows": "ten"}', '"rows" must be a whole number'),
    ],
)
def test_ranker_server_bad_request_is_400_with_reason(server, body, message):
    response = HTTP.post(server.url, content=body, headers={"Content-Type": "application/json"})

    assert response.status_code == 400
    assert message in response.json()["error"]


def test_ranker_server_unknown_get_path_is_404(server):
    assert HTTP.get(server.url + "nothing").status_code == 404


def test_ranker_server_serves_concurrent_requests_in_parallel(served):
    process = served.start("--latency-ms", "300")
    try:
        body = {"question": {"id": "q1", "text": "boundary layer"}, "rows": 3}
        with httpx.Client(timeout=10) as client, ThreadPoolExecutor(max_workers=32) as pool:
            started = time.monotonic()
            responses = list(pool.map(lambda _: client.post(process.url, json=body), range(32)))
            elapsed = time.monotonic() - started
    finally:
        process.stop()

    assert [r.status_code for r in responses] == [200] * 32
    assert {tuple(a["id"] for a in r.json()["answers"]) for r in responses} == {("a4", "a1")}
    # One at a time, 32 requests would take 32 x 0.3 s = 9.6 s.
    assert elapsed < 3.0


@pytest.mark.django_db
def test_ranker_server_unknown_collection_is_an_error():
    with pytest.raises(CommandError, match="no collection with slug 'nope'"):
        call_command("ranker_server", "--collection", "nope", "--port", "0")


@pytest.mark.django_db
def test_ranker_server_negative_fault_option_is_an_error(collection):
    with pytest.raises(CommandError, match="--latency-ms must be 0 or more"):
        call_command("ranker_server", "--collection", collection.slug, "--latency-ms", "-1")


def test_ranker_server_version_option_serves_that_version(served, django_db_blocker):
    from rankers.models import Ranker, RankerVersion
    from rankers.services import ranker_create

    with django_db_blocker.unblock():
        collection = Ranker._meta.get_field("collection").related_model.objects.get(slug="served")
        ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")
        older = RankerVersion.objects.create(ranker=ranker, label="v0-bm25", method="bm25")
    process = served.start("--ranker", str(ranker.pk), "--version", str(older.pk))
    try:
        health = HTTP.get(process.url + "healthz").json()
    finally:
        process.stop()
        with django_db_blocker.unblock():
            ranker.delete()

    assert (health["ranker"], health["version"]) == ("Built-in", "v0-bm25")


def test_ranker_server_unknown_version_is_an_error(collection):
    with pytest.raises(CommandError, match="has no version with id 999999"):
        call_command("ranker_server", "--collection", collection.slug, "--version", "999999")


def test_ranker_server_encodes_a_question_as_the_export_needs_it(server):
    response = HTTP.post(server.url + "encode", json={"text": "boundary layer flows"})

    assert response.status_code == 200
    vector = response.json()["vector"]
    assert len(vector) == 384
    assert vector == vector_values(question_vectors(["boundary layer flows"])[0])
    missing = HTTP.post(server.url + "encode", json={"question": "boundary layer flows"})
    assert (missing.status_code, missing.json()) == (
        400,
        {"error": '"text" must be a string: the question to encode'},
    )
