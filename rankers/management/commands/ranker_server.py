"""Serve a collection's builtin ranker over the HTTP ranker protocol, as a process of its own.

It is the reference implementation of the protocol an ``http`` ranker speaks (see
``trainer/rankers/http.py``)::

    POST /     {"question": {"id": "q-17", "text": "..."}, "rows": 10}
    200        {"answers": [{"id": "184", "score": 12.7}, ...]}
    GET /healthz

The index (and the model of the version served) is loaded once at start; requests are served by a
thread each (``ThreadingHTTPServer``) and never touch the database.

Fault injection, for tests and benchmarks only (a real service never wants these):
``--latency-ms N`` sleeps N ms before answering; ``--fail-first N`` answers the first N rank requests
with 500; ``--garbage`` answers 200 with a body that is not JSON; ``--unknown-ids N`` puts N answer
ids the collection does not have at the top of every ranking.
"""

from __future__ import annotations

import json
import threading
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from corpus.models import Collection
from rankers.backends import RankerError, RankQuery, get_backend
from rankers.builtin import BuiltinBackend
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.selectors import default_ranker

MAX_BODY_BYTES = 1_000_000
MAX_ROWS = 1000


class Faults:
    def __init__(self, *, latency_ms: int, fail_first: int, garbage: bool, unknown_ids: int) -> None:
        self.latency = latency_ms / 1000
        self.garbage = garbage
        self.unknown_ids = unknown_ids
        self._failures_left = fail_first
        self._lock = threading.Lock()

    def should_fail(self) -> bool:
        with self._lock:
            if self._failures_left > 0:
                self._failures_left -= 1
                return True
            return False


class Server(ThreadingHTTPServer):
    request_queue_size = 256  # many concurrent evaluation requests
    daemon_threads = True


class ProtocolError(ValueError):
    pass


def parse_request(body: bytes) -> tuple[RankQuery, int]:
    """The question and rows of a rank request, or ProtocolError saying what is wrong."""
    try:
        payload = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ProtocolError("body must be JSON") from None
    question = payload.get("question") if isinstance(payload, dict) else None
    if not isinstance(question, dict):
        raise ProtocolError('"question" must be an object with "id" and "text"')
    qid, text = question.get("id"), question.get("text")
    if isinstance(qid, bool) or not isinstance(qid, str | int):
        raise ProtocolError('"question.id" must be a string')
    if not isinstance(text, str):
        raise ProtocolError('"question.text" must be a string')
    rows = payload.get("rows", 10)
    if isinstance(rows, bool) or not isinstance(rows, int) or not 1 <= rows <= MAX_ROWS:
        raise ProtocolError(f'"rows" must be a whole number from 1 to {MAX_ROWS}')
    return RankQuery(external_id=str(qid), text=text), rows


def make_handler(*, backend: Any, faults: Faults, health: dict[str, Any], verbose: bool) -> type:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the trainer's client reuses connections
        # Headers and body go out in two writes: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms each.
        disable_nagle_algorithm = True
        server_version = "RankTrainerRankerServer/1"

        def _send(self, status: int, payload: Any = None, raw: bytes | None = None) -> None:
            body = raw if raw is not None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if raw is None else "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/") == "/healthz":
                self._send(HTTPStatus.OK, health)
            else:
                self._send(HTTPStatus.NOT_FOUND, {"error": "POST a question to / ; GET /healthz"})

        def do_POST(self) -> None:  # noqa: N802
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY_BYTES:
                self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "request body too large"})
                return
            body = self.rfile.read(length)
            if faults.latency:
                time.sleep(faults.latency)
            if faults.should_fail():
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "injected failure (--fail-first)"})
                return
            if faults.garbage:
                self._send(HTTPStatus.OK, raw=b"<html>injected garbage (--garbage)</html>")
                return
            try:
                query, rows = parse_request(body)
            except ProtocolError as exc:
                self._send(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                return
            try:
                ranking = backend.rank(query, rows)
            except RankerError as exc:
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": str(exc)})
                return
            answers = [{"id": answer_id, "score": score} for answer_id, score in ranking.answers]
            if faults.unknown_ids:
                top = answers[0]["score"] + 1 if answers else 1.0
                fake = [
                    {"id": f"unknown-{i + 1}", "score": top + faults.unknown_ids - i}
                    for i in range(faults.unknown_ids)
                ]
                answers = (fake + answers)[:rows]
            self._send(HTTPStatus.OK, {"answers": answers})

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            if verbose:
                super().log_message(format, *args)

    return Handler


class Command(BaseCommand):
    help = "Serve a collection's builtin ranker over the HTTP ranker protocol (POST /, GET /healthz)."

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # --version names the ranker version to serve here, in place of Django's own --version.
        return super().create_parser(prog_name, subcommand, conflict_handler="resolve", **kwargs)

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--collection", required=True, help="slug of the collection to rank")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8077, help="0 picks a free port (printed at start)")
        parser.add_argument(
            "--ranker",
            type=int,
            help="id of a builtin ranker of the collection whose champion to serve "
            "(default: the collection's default ranker if builtin, else plain BM25)",
        )
        parser.add_argument(
            "--version", type=int, metavar="ID", help="serve this version of the ranker instead"
        )
        faults = parser.add_argument_group("fault injection (tests and benchmarks only)")
        faults.add_argument("--latency-ms", type=int, default=0, help="sleep this long before each answer")
        faults.add_argument(
            "--fail-first", type=int, default=0, help="answer the first N rank requests with 500"
        )
        faults.add_argument("--garbage", action="store_true", help="answer 200 with a body that is not JSON")
        faults.add_argument("--unknown-ids", type=int, default=0, help="put N unknown answer ids on top")

    def handle(self, *args: Any, **options: Any) -> None:
        collection = Collection.objects.filter(slug=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection with slug {options['collection']!r}")
        for name in ("latency_ms", "fail_first", "unknown_ids"):
            if options[name] < 0:
                raise CommandError(f"--{name.replace('_', '-')} must be 0 or more")
        ranker: Ranker | None
        if options["ranker"] is not None:
            ranker = Ranker.objects.filter(pk=options["ranker"], collection=collection).first()
            if ranker is None or ranker.kind != RankerKind.BUILTIN:
                raise CommandError(
                    f"collection {collection.slug} has no builtin ranker with id {options['ranker']}"
                )
        else:
            ranker = default_ranker(collection=collection)
            if ranker is not None and ranker.kind != RankerKind.BUILTIN:
                ranker = None
        version_asked: RankerVersion | None = None
        if options["version"] is not None:
            version_asked = RankerVersion.objects.filter(pk=options["version"], ranker=ranker).first()
            if ranker is None or version_asked is None:
                raise CommandError(f"the ranker served has no version with id {options['version']}")
        try:
            served = (
                get_backend(ranker, version_asked)
                if ranker is not None
                else BuiltinBackend(collection=collection)
            )
        except RankerError as exc:
            raise CommandError(str(exc)) from exc
        assert isinstance(served, BuiltinBackend)  # only builtin rankers are served
        backend: BuiltinBackend = served
        version: RankerVersion | None = backend.version
        connections.close_all()  # requests never use the database
        health = {
            "status": "ok",
            "collection": collection.slug,
            "answers": backend.index.size,
            "ranker": ranker.name if ranker else "BM25",
            "version": version.label if version else None,
            "uses_model": backend.model is not None,
        }
        faults = Faults(
            latency_ms=options["latency_ms"],
            fail_first=options["fail_first"],
            garbage=options["garbage"],
            unknown_ids=options["unknown_ids"],
        )
        handler = make_handler(
            backend=backend, faults=faults, health=health, verbose=options["verbosity"] >= 2
        )
        server = Server((options["host"], options["port"]), handler)
        host, port = options["host"], server.server_address[1]
        self.stdout.write(
            f"ranker_server: {collection.slug} ({health['answers']} answers, {health['ranker']}"
            f"{' ' + version.label if version else ''}) on http://{host}:{port}/"
        )
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
