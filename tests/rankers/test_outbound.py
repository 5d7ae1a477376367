"""The outbound policy (rankers/outbound.py) for every URL the server calls: http rankers and their config.

Link-local and metadata addresses are always refused; loopback and private networks only with
OUTBOUND_ALLOW_PRIVATE (on in the test suite, turned off here where a test says so); checked after DNS
resolution, redirects not followed, and the far side's body never shown.
"""

from __future__ import annotations

import ipaddress
import json
import socket
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.exceptions import ValidationError

from rankers.backends import RankerError, RankerUnavailable, RankQuery
from rankers.config import validate_ranker_config
from rankers.http import HttpBackend
from rankers.outbound import guarded_client, refusal

QUERY = RankQuery("q1", "boundary layer flows")
NEVER = "is a link-local or cloud metadata address, which is never allowed"
PRIVATE = (
    "is a loopback or private-network address, allowed only when the OUTBOUND_ALLOW_PRIVATE setting is on"
)


@dataclass
class LocalServer:
    """An HTTP server on 127.0.0.1 answering every POST with ``status``, ``body`` and ``headers``."""

    status: int = 200
    body: bytes = json.dumps({"answers": [{"id": "a1", "score": 1.0}]}).encode()
    headers: dict[str, str] = field(default_factory=dict)
    requests: list[str] = field(default_factory=list)
    port: int = 0


@pytest.fixture
def local_server() -> Iterator[LocalServer]:
    state = LocalServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server API
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            state.requests.append(self.path)
            self.send_response(state.status)
            for name, value in state.headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(state.body)))
            self.end_headers()
            self.wfile.write(state.body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def private_off(settings):
    settings.OUTBOUND_ALLOW_PRIVATE = False


def backend(url: str) -> HttpBackend:
    return HttpBackend(config={"url": url, "retries": 0, "timeout": 2})


# --- the rule, per class of address ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "address",
    [
        "169.254.169.254",
        "169.254.0.1",
        "fe80::1",
        "100.100.100.200",
        "fd00:ec2::254",
        "::ffff:169.254.169.254",
    ],
)
@pytest.mark.parametrize("private_allowed", [False, True])
def test_refusal_link_local_and_metadata_always_refused(address, private_allowed):
    reason = refusal(ipaddress.ip_address(address), private_allowed=private_allowed)

    assert reason is not None and reason.endswith(NEVER)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "127.5.0.1",
        "::1",
        "0.0.0.0",
        "10.1.2.3",
        "172.16.0.1",
        "192.168.1.1",
        "100.64.0.1",
        "fc00::1",
    ],
)
def test_refusal_loopback_and_private_refused_unless_setting(address):
    assert refusal(ipaddress.ip_address(address), private_allowed=False) == f"{address} {PRIVATE}"
    assert refusal(ipaddress.ip_address(address), private_allowed=True) is None


@pytest.mark.parametrize("address", ["224.0.0.1", "ff02::1", "255.255.255.255"])
def test_refusal_multicast_and_broadcast_always_refused(address):
    assert refusal(ipaddress.ip_address(address), private_allowed=True) == (
        f"{address} is a multicast or broadcast address, which is never allowed"
    )


@pytest.mark.parametrize("address", ["8.8.8.8", "2606:4700::1111", "::ffff:8.8.8.8"])
def test_refusal_public_addresses_allowed(address):
    assert refusal(ipaddress.ip_address(address), private_allowed=False) is None


# --- config validation: address literals refused before anything is saved ----------------------------


@pytest.mark.parametrize(
    ("url", "address"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
        ("http://[fe80::1]:8080/rank", "fe80::1"),
        ("http://100.100.100.200/", "100.100.100.200"),
        ("http://[fd00:ec2::254]/", "fd00:ec2::254"),
    ],
)
def test_http_config_metadata_url_refused(url, address):
    with pytest.raises(ValidationError) as info:
        validate_ranker_config(kind="http", config={"url": url})

    assert info.value.message_dict == {
        "url": [f"url {url!r} is refused by the outbound policy: {address} {NEVER}."]
    }


@pytest.mark.parametrize(
    ("url", "address"), [("http://127.0.0.1:8077/", "127.0.0.1"), ("http://localhost:8077/", "127.0.0.1")]
)
def test_http_config_loopback_url_refused_without_setting(private_off, url, address):
    with pytest.raises(ValidationError) as info:
        validate_ranker_config(kind="http", config={"url": url})

    assert info.value.message_dict == {
        "url": [f"url {url!r} is refused by the outbound policy: {address} {PRIVATE}."]
    }


def test_http_config_loopback_url_allowed_with_setting(settings):
    settings.OUTBOUND_ALLOW_PRIVATE = True

    assert validate_ranker_config(kind="http", config={"url": "http://127.0.0.1:8077/"})["url"] == (
        "http://127.0.0.1:8077/"
    )


# --- calls: checked on the addresses connected to, after DNS resolution ------------------------------


def test_http_ranker_loopback_allowed_with_setting(settings, local_server):
    settings.OUTBOUND_ALLOW_PRIVATE = True

    assert backend(f"http://127.0.0.1:{local_server.port}/rank").rank(QUERY, 3).ids == ["a1"]
    assert local_server.requests == ["/rank"]


def test_http_ranker_loopback_refused_without_setting_nothing_sent(private_off, local_server):
    url = f"http://127.0.0.1:{local_server.port}/rank"

    with pytest.raises(RankerError) as info:
        backend(url).rank(QUERY, 3)

    assert str(info.value) == f"ranker at {url}: refused by the outbound policy: 127.0.0.1 {PRIVATE}"
    assert not isinstance(info.value, RankerUnavailable)  # not retried
    assert local_server.requests == []


def test_http_ranker_name_resolving_to_loopback_refused_without_setting(private_off, local_server):
    """A host name is checked on what it resolves to (localhost: 127.0.0.1 and maybe ::1)."""
    url = f"http://localhost:{local_server.port}/rank"

    with pytest.raises(RankerError, match="refused by the outbound policy: (127.0.0.1|::1) is a loopback"):
        backend(url).rank(QUERY, 3)

    assert local_server.requests == []


def test_http_ranker_name_resolving_to_metadata_refused_even_with_setting(settings, monkeypatch):
    """DNS answers decide: a name resolving to the metadata address is refused before any connection."""
    settings.OUTBOUND_ALLOW_PRIVATE = True
    real_getaddrinfo, connects = socket.getaddrinfo, []

    def getaddrinfo(host, *args, **kwargs):
        if host == "ranker.example.com":
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("169.254.169.254", 80))]
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(socket, "create_connection", lambda *a, **k: connects.append(a))

    with pytest.raises(RankerError) as info:
        backend("http://ranker.example.com/rank").rank(QUERY, 3)

    assert str(info.value) == (
        f"ranker at http://ranker.example.com/rank: refused by the outbound policy: 169.254.169.254 {NEVER}"
    )
    assert connects == []


def test_http_ranker_name_with_one_refused_address_refused(settings, monkeypatch):
    """Every address a name resolves to must pass: a public one beside a metadata one doesn't help."""
    settings.OUTBOUND_ALLOW_PRIVATE = False

    def getaddrinfo(host, *args, **kwargs):
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.215.14", 80)),
            (socket.AF_INET6, socket.SOCK_STREAM, 6, "", ("fd00:ec2::254", 80, 0, 0)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)

    with pytest.raises(RankerError, match=f"fd00:ec2::254 {NEVER}"):
        backend("http://mixed.example.com/rank").rank(QUERY, 3)


def test_http_ranker_redirect_not_followed(settings, local_server):
    settings.OUTBOUND_ALLOW_PRIVATE = True
    local_server.status = 302
    local_server.headers = {"Location": "http://169.254.169.254/latest/meta-data/"}
    local_server.body = b"redirecting to the metadata service"
    url = f"http://127.0.0.1:{local_server.port}/rank"

    with pytest.raises(RankerError) as info:
        backend(url).rank(QUERY, 3)

    assert str(info.value) == f"ranker at {url} answered 302 Found; redirects are not followed"
    assert local_server.requests == ["/rank"]


@pytest.mark.parametrize(
    ("status", "message"),
    [(404, "answered 404 Not Found"), (500, "answered 500 Internal Server Error (1 attempt)")],
)
def test_http_ranker_error_never_shows_far_side_body(settings, local_server, status, message):
    settings.OUTBOUND_ALLOW_PRIVATE = True
    local_server.status = status
    local_server.body = b"<html>internal admin page: password=hunter2</html>"
    url = f"http://127.0.0.1:{local_server.port}/rank"

    with pytest.raises(RankerError) as info:
        backend(url).rank(QUERY, 3)

    assert str(info.value) == f"ranker at {url} {message}"


def test_guarded_clients_share_one_tls_context_that_verifies():
    first, second = guarded_client(), guarded_client()
    context = first._transport._pool._ssl_context
    assert context is second._transport._pool._ssl_context  # the CAs are loaded once, not per client
    assert (context.verify_mode, context.check_hostname) == (ssl.CERT_REQUIRED, True)
    assert context.get_ca_certs() or context.cert_store_stats()["x509_ca"] > 0
