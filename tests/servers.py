"""Test servers: free_port · start_manage_server · start_ranker/judge/engine_server · engine_running.

- ``free_port()``: a port on 127.0.0.1 that nothing listens on.
- ``start_manage_server`` / ``ManagedServer``: a ``manage.py`` server in a subprocess on a free port, awaited
  (its readiness request answers), stopped (``stop()``: SIGTERM, then SIGKILL), its log kept (``log()``).
- On it: ``start_ranker_server`` / ``RankerServer``, ``start_judge_server`` / ``JudgeServer``,
  ``start_engine_server`` / ``EngineProcess`` (``manage.py ranker_server``, ``judge_server``, ``engine_server``).
- ``engine_running``: the stand-in search engine (``rankers.engine_server.EngineServer``) in this process.
- ``SharedServers``: servers started once for the same options and reused by the tests that follow (a
  ``manage.py`` server's start is a second of CPU, Django's start-up), ``options_key`` their key.

The fixtures that serve them stay with their tests (``served`` and ``model_dir`` in
tests/rankers/rankers_support.py, ``judge_server_factory`` and ``judge_server`` in tests/judges/conftest.py,
``engine`` in tests/rankers/engine_support.py, ...) and call these.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import httpx
import pytest

from rankers.engine_server import EngineServer
from tests.conftest import ROOT, _database_url_for_tests
from tests.http_client import HTTP

START_SECONDS = 60  # for a server to answer its readiness request
STOP_SECONDS = 10  # for it to exit after SIGTERM (then SIGKILL), and again after SIGKILL
LOG_TAIL = 5000  # the characters of its log that ``log()`` returns


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (now)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@dataclass
class ManagedServer:
    """A ``manage.py`` server in a real subprocess on a free port, its output in ``log_path``."""

    url: str
    process: subprocess.Popen
    log_path: Path

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_SECONDS)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-LOG_TAIL:]


class RankerServer(ManagedServer):
    """``manage.py ranker_server``: ``url`` is ``http://127.0.0.1:PORT/`` (POST to rank, ``healthz``)."""


class JudgeServer(ManagedServer):
    """``manage.py judge_server``: ``url`` is the base URL a judge is configured with (``.../v1``)."""


class EngineProcess(ManagedServer):
    """``manage.py engine_server``: ``url`` is ``http://127.0.0.1:PORT`` (``/<index>/_search``,
    ``/solr/<core>/select``, ``/healthz``)."""


Server = TypeVar("Server", bound=ManagedServer)


def start_manage_server(
    command: str,
    slug: str,
    log_dir: Path,
    *args: str,
    server: type[Server],
    path: str = "",
    ready_path: str = "/healthz",
    ready_status: int | None = 200,
    env: Mapping[str, str] | None = None,
) -> Server:
    """``manage.py <command> --collection <slug> --port <free port> *args`` (the collection's data must be
    committed), on the test database, its output appended to ``<log_dir>/<command>-<port>.log`` (``_`` as
    ``-``); returned as ``server`` with ``url`` ``http://127.0.0.1:<port><path>`` once a GET of
    ``ready_path`` answers with ``ready_status`` (None: any answer). It exiting first, or not answering in
    START_SECONDS (then it is stopped), is a RuntimeError with the end of its log."""
    port = free_port()
    environment = {
        **os.environ,
        "DATABASE_URL": _database_url_for_tests(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        **(env or {}),
    }
    log_path = log_dir / f"{command.replace('_', '-')}-{port}.log"
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            [sys.executable, "manage.py", command, "--collection", slug, "--port", str(port), *args],
            cwd=ROOT,
            env=environment,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    started = server(url=base + path, process=process, log_path=log_path)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"{command} exited early:\n{started.log()}")
        try:
            response = HTTP.get(base + ready_path, timeout=1)
            if ready_status is None or response.status_code == ready_status:
                return started
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    started.stop()
    raise RuntimeError(f"{command} did not become ready in {START_SECONDS} s:\n{started.log()}")


def start_ranker_server(slug: str, log_dir: Path, *args: str, model_dir: Path | None = None) -> RankerServer:
    """Start the ranker server for the collection (MODEL_DIR ``model_dir`` if given) and wait until
    /healthz answers 200."""
    env = {} if model_dir is None else {"MODEL_DIR": str(model_dir)}
    return start_manage_server("ranker_server", slug, log_dir, *args, server=RankerServer, path="/", env=env)


def start_judge_server(slug: str, log_dir: Path, *args: str) -> JudgeServer:
    """Start the reference judge for the collection and wait until /v1/models answers."""
    return start_manage_server(
        "judge_server",
        slug,
        log_dir,
        *args,
        server=JudgeServer,
        path="/v1",
        ready_path="/v1/models",
        ready_status=None,
    )


def start_engine_server(slug: str, log_dir: Path, *args: str) -> EngineProcess:
    """Start the stand-in engine serving the collection's answers and wait until /healthz answers 200."""
    return start_manage_server("engine_server", slug, log_dir, *args, server=EngineProcess)


def options_key(args: Sequence[str]) -> tuple[tuple[str, ...], ...]:
    """A server's command-line options as a key that ignores their order: each option with the values
    that follow it (arguments not starting with ``--``), sorted."""
    options: list[tuple[str, ...]] = []
    for arg in args:
        if arg.startswith("--") or not options:
            options.append((arg,))
        else:
            options[-1] += (arg,)
    return tuple(sorted(options))


class SharedServers:
    """Servers kept for the tests under ``directory`` that follow one another: ``get(request, key, start)``
    is the server kept under ``key`` if it still runs, else the one ``start()`` returns, then kept. They
    are stopped after a test whose next test is not under ``directory`` (or is none), and at the session's
    end. Only for servers that keep no state between requests (no fault counter that requests use up) and
    that no test stops: a test sees the server as a fresh one would answer it.

    Registered as a pytest plugin on first use, for those two hooks."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.servers: dict[Hashable, ManagedServer] = {}

    def get(self, request: pytest.FixtureRequest, key: Hashable, start: Callable[[], Server]) -> Server:
        plugins = request.config.pluginmanager
        if not plugins.is_registered(self):
            plugins.register(self)
        server = self.servers.get(key)
        if server is None or server.process.poll() is not None:
            server = self.servers[key] = start()
        return server  # type: ignore[return-value]

    def stop(self) -> None:
        servers, self.servers = list(self.servers.values()), {}
        for server in servers:
            server.stop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item, nextitem: pytest.Item | None):
        try:
            return (yield)
        finally:
            if self.servers and (nextitem is None or self.directory not in nextitem.path.parents):
                self.stop()

    def pytest_sessionfinish(self) -> None:
        self.stop()


@contextmanager
def engine_running(documents: dict[str, dict[str, str]], **options) -> Iterator[EngineServer]:
    """The stand-in engine serving ``documents`` from a thread of this process (``options``: the
    ``EngineServer``'s), stopped at the end."""
    server = EngineServer(documents, **options).start()
    try:
        yield server
    finally:
        server.stop()
