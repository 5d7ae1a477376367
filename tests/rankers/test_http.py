"""The http ranker kind against `manage.py ranker_server` in a real subprocess, faults injected there."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

import rankers.http
from rankers.backends import RankerError, RankerUnavailable, RankQuery, get_backend
from rankers.http import HttpBackend, parse_ranking
from rankers.models import Ranker, RankerKind
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import TINY_ANSWERS
from tests.servers import free_port

KNOWN = frozenset(a.external_id for a in TINY_ANSWERS)
QUERY = RankQuery("q1", "boundary layer flows")


@pytest.fixture(scope="module")
def server(served, request):
    return served.shared(request)  # the plain BM25 server, shared with the other modules here


@pytest.fixture
def fault_server(served, request):
    started = []

    def start(*args: str):
        process = served.start(*args)
        started.append(process)
        return process

    yield start
    for process in started:
        process.stop()


def test_http_ranker_happy_path_returns_server_ranking(server):
    backend = HttpBackend(config={"url": server.url, "timeout": 5, "retries": 0}, known_ids=KNOWN)

    ranking = backend.rank(QUERY, 10)

    # The reference server serves the builtin BM25 ranker, so this is its order (see the builtin tests).
    assert ranking.ids == ["a1", "a4", "a2"]
    assert ranking.unknown_ids == []
    assert all(isinstance(score, float) for _, score in ranking.answers)


def test_http_ranker_respects_rows(server):
    backend = HttpBackend(config={"url": server.url}, known_ids=KNOWN)

    assert backend.rank(QUERY, 1).ids == ["a1"]


@pytest.mark.django_db
def test_get_backend_http_ranker_reports_ids_the_collection_lacks(server, collection):
    # The ranker belongs to "tiny", which has only a1: the served ids a4 and a2 are unknown to it.
    from corpus.services import answers_upsert

    answers_upsert(collection=collection, records=TINY_ANSWERS[:1])
    ranker = Ranker.objects.create(
        collection=collection, name="Service", kind=RankerKind.HTTP, config={"url": server.url}
    )

    ranking = get_backend(ranker).rank(QUERY, 10)

    assert ranking.ids == ["a1", "a4", "a2"]
    assert ranking.unknown_ids == ["a4", "a2"]


def test_http_ranker_unknown_ids_are_kept_in_rank_and_reported(fault_server):
    process = fault_server("--unknown-ids", "2")
    backend = HttpBackend(config={"url": process.url}, known_ids=KNOWN)

    ranking = backend.rank(QUERY, 4)

    assert ranking.ids == ["unknown-1", "unknown-2", "a1", "a4"]
    assert ranking.unknown_ids == ["unknown-1", "unknown-2"]


def test_http_ranker_slow_server_times_out_after_retries(fault_server):
    process = fault_server("--latency-ms", "2000")
    backend = HttpBackend(config={"url": process.url, "timeout": 0.3, "retries": 1}, known_ids=KNOWN)

    started = time.monotonic()
    with pytest.raises(RankerUnavailable, match=r"did not answer within 0.3 s"):
        backend.rank(QUERY, 10)

    # Two attempts of 0.3 s and one backoff of about 0.1 s, not the server's 2 s each.
    assert time.monotonic() - started < 1.5


def test_http_ranker_500_then_success_is_retried(fault_server):
    process = fault_server("--fail-first", "2")
    backend = HttpBackend(config={"url": process.url, "retries": 2}, known_ids=KNOWN)

    assert backend.rank(QUERY, 10).ids == ["a1", "a4", "a2"]


def test_http_ranker_500_more_often_than_retries_is_unavailable(fault_server):
    process = fault_server("--fail-first", "3")
    backend = HttpBackend(config={"url": process.url, "retries": 2}, known_ids=KNOWN)

    with pytest.raises(RankerUnavailable, match="answered 500"):
        backend.rank(QUERY, 10)
    # The server's failures are used up, so the next question succeeds.
    assert backend.rank(QUERY, 10).ids == ["a1", "a4", "a2"]


def test_http_ranker_garbage_body_is_a_ranker_error_not_retried(fault_server):
    process = fault_server("--garbage")
    backend = HttpBackend(config={"url": process.url, "retries": 5}, known_ids=KNOWN)

    started = time.monotonic()
    with pytest.raises(RankerError) as info:
        backend.rank(QUERY, 10)

    # The far side's body is never shown (it could be an internal page): the status or the problem only.
    assert str(info.value) == f"ranker at {process.url} answered with a body that is not JSON"
    assert not isinstance(info.value, RankerUnavailable)
    assert time.monotonic() - started < 1.0  # no retry backoff


def test_http_ranker_connection_refused_is_unavailable():
    backend = HttpBackend(config={"url": f"http://127.0.0.1:{free_port()}/", "retries": 1}, known_ids=KNOWN)

    with pytest.raises(RankerUnavailable, match="cannot be reached"):
        backend.rank(QUERY, 10)


@dataclass
class Recorded:
    """What a scripted ranker server received: one (headers, body) per request."""

    requests: list[tuple[dict[str, str], bytes]] = field(default_factory=list)


@pytest.fixture
def scripted_server():
    """scripted_server(status, body, content_type) -> (url, Recorded): a real HTTP server on loopback that
    answers every POST with that status and body and records what it was sent (headers, raw body)."""
    servers = []

    def start(status: int, body: bytes, content_type: str = "application/json"):
        recorded = Recorded()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - http.server's naming
                length = int(self.headers.get("Content-Length") or 0)
                recorded.requests.append(
                    ({k.lower(): v for k, v in self.headers.items()}, self.rfile.read(length))
                )
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/rank", recorded

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_http_ranker_sends_auth_header_and_headers(scripted_server):
    url, recorded = scripted_server(200, b'{"answers": [{"id": "a1", "score": 1}]}')
    backend = HttpBackend(
        config={"url": url, "auth_header": "Bearer s3cret", "headers": {"X-Team": "ir"}}, known_ids=KNOWN
    )

    assert backend.rank(QUERY, 3).ids == ["a1"]
    ((headers, body),) = recorded.requests
    assert headers["authorization"] == "Bearer s3cret"
    assert headers["x-team"] == "ir"
    assert headers["content-type"] == "application/json"
    assert body == b'{"question":{"id":"q1","text":"boundary layer flows"},"rows":3}'


def test_http_ranker_4xx_is_a_ranker_error_not_retried(scripted_server):
    url, recorded = scripted_server(403, b"forbidden: internal secret page", content_type="text/html")
    backend = HttpBackend(config={"url": url, "retries": 3}, known_ids=KNOWN)

    with pytest.raises(RankerError) as info:
        backend.rank(QUERY, 3)
    # The far side's status only, never its body.
    assert str(info.value) == f"ranker at {url} answered 403 Forbidden"
    assert not isinstance(info.value, RankerUnavailable)
    assert len(recorded.requests) == 1


def test_http_ranker_redirect_is_not_followed(scripted_server):
    url, recorded = scripted_server(302, b"")
    backend = HttpBackend(config={"url": url, "retries": 3}, known_ids=KNOWN)

    with pytest.raises(RankerError) as info:
        backend.rank(QUERY, 3)
    assert str(info.value) == f"ranker at {url} answered 302 Found; redirects are not followed"
    assert len(recorded.requests) == 1


def test_http_ranker_5xx_retries_and_says_the_attempts_made(scripted_server, monkeypatch):
    monkeypatch.setattr(rankers.http, "BACKOFF_FIRST", 0.001)
    url, recorded = scripted_server(503, b"down for maintenance: internal detail", content_type="text/plain")
    backend = HttpBackend(config={"url": url, "retries": 2}, known_ids=KNOWN)

    with pytest.raises(RankerUnavailable) as info:
        backend.rank(QUERY, 3)
    assert str(info.value) == f"ranker at {url} answered 503 Service Unavailable (3 attempts)"
    assert len(recorded.requests) == 3


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ([], 'JSON object with an "answers" list'),
        ({"results": []}, 'JSON object with an "answers" list'),
        ({"answers": {"id": "a1"}}, 'JSON object with an "answers" list'),
        ({"answers": ["a1"]}, "answer 1 must be an object"),
        ({"answers": [{"score": 1}]}, 'answer 1 has no usable "id"'),
        ({"answers": [{"id": "", "score": 1}]}, 'answer 1 has no usable "id"'),
        ({"answers": [{"id": "a1"}]}, "answer 1 (id 'a1') has no numeric \"score\""),
        ({"answers": [{"id": "a1", "score": "high"}]}, "has no numeric"),
        ({"answers": [{"id": "a1", "score": True}]}, "has no numeric"),
        ({"answers": [{"id": "a1", "score": 2}, {"id": "a1", "score": 1}]}, "answer id 'a1' is listed twice"),
    ],
)
def test_parse_ranking_malformed_body_names_the_problem(payload, message):
    with pytest.raises(RankerError) as info:
        parse_ranking(payload, k=10, known_ids=KNOWN)

    assert message in str(info.value)


def test_parse_ranking_numeric_ids_and_extra_rows():
    ranking = parse_ranking(
        {"answers": [{"id": 7, "score": 3}, {"id": "a1", "score": 2.5}, {"id": "a2", "score": 1}]},
        k=2,
        known_ids=KNOWN,
    )

    assert ranking.answers == [("7", 3.0), ("a1", 2.5)]
    assert ranking.unknown_ids == ["7"]
