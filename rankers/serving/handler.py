"""The threaded HTTP server of ``ranker_server`` and its request handler (``rankers.serving``)."""

from __future__ import annotations

import json
import logging
import time
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from rankers.backends import RankerError
from rankers.base import Ranking
from rankers.builtin import bm25_scores, shares_first_stage
from rankers.embedding import EmbeddingUnavailable
from rankers.export.spec import vector_values
from rankers.semantic import question_vectors
from rankers.serving.online import OnlineServing, OnlineWatch
from rankers.serving.protocol import (
    MAX_BODY_BYTES,
    ProtocolError,
    parse_encode_request,
    parse_rank_request,
    parse_request,
)
from rankers.serving.service import Answered, Faults, RerankingService, UpstreamError
from ubi.log import APP_TRAFFIC_HEADER, UbiLog, query_id_new
from ubi.records import RecordError

logger = logging.getLogger(__name__)


class Server(ThreadingHTTPServer):
    request_queue_size = 256  # many concurrent evaluation requests
    daemon_threads = True


def make_handler(
    *,
    backend: Any,
    faults: Faults,
    health: dict[str, Any],
    verbose: bool,
    version_label: str | None = None,
    ubi: UbiLog | None = None,
    online: OnlineWatch | None = None,
) -> type:
    """The request handler. ``backend``: a BuiltinBackend (answers as the protocol has them) or a
    RerankingService (answers saying ``reranked`` and ``version``, and ``POST /rank``). ``ubi``: the log
    each answer (with its ``query_id``) goes to, and ``POST /events``; None: nothing is logged.
    ``online``: the running online test, whose share of the queries is answered by the team-draft
    interleaving of the champion's and the challenger's rankings (``rankers.serving.online``; only when
    logging: the teams are in the log) and the champion it follows: each request reads ``online.served``
    once (``backend`` and ``version_label`` are what the server started with)."""
    service = backend if isinstance(backend, RerankingService) else None
    ranker_name = health.get("ranker")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the trainer's client reuses connections
        # Headers and body go out in two writes: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms each.
        disable_nagle_algorithm = True
        server_version = "RankTrainerRankerServer/1"
        started = 0.0  # when the request's body was read (perf_counter)
        backend: Any = None  # this request's backend and version label (``online.served``, read once)
        version_label: str | None = None

        def _send(
            self,
            status: int,
            payload: Any = None,
            raw: bytes | None = None,
            headers: dict[str, str] | None = None,
        ) -> None:
            body = raw if raw is not None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json" if raw is None else "text/html")
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if self.path.rstrip("/") == "/healthz":
                testing = online.health() if online is not None else None
                now = {**health, **online.champion_health()} if online is not None else health
                self._send(HTTPStatus.OK, {**now, "online_test": testing} if testing else now)
            elif self.path.rstrip("/") == "/ubi/stats" and ubi is not None:
                self._send(HTTPStatus.OK, ubi.stats())
            else:
                self._send(HTTPStatus.NOT_FOUND, {"error": "POST a question to / ; GET /healthz"})

        def do_POST(self) -> None:  # noqa: N802
            served = online.served if online is not None else None
            self.backend = served.backend if served is not None else backend
            self.version_label = served.label if served is not None else version_label
            try:
                self._post()
            except Exception as exc:  # a bug: still an answer, in JSON, never a dropped connection
                logger.exception("ranker_server: %s %s failed", self.command, self.path)
                self.close_connection = True
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": f"internal error: {exc!r}"})

        def _post(self) -> None:
            try:
                length = int(self.headers.get("Content-Length") or 0)
            except ValueError:
                length = -1
            if length < 0:
                self.close_connection = True
                self._send(HTTPStatus.BAD_REQUEST, {"error": "Content-Length must be a whole number"})
                return
            if length > MAX_BODY_BYTES:
                self.close_connection = True  # the body is not read: the connection can't be reused
                self._send(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, {"error": "request body too large"})
                return
            body = self.rfile.read(length)
            self.started = time.perf_counter()
            if self.path.split("?", 1)[0].rstrip("/") == "/events":
                self._events(body)
                return
            if faults.latency:
                time.sleep(faults.latency)
            if faults.should_fail():
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "injected failure (--fail-first)"})
                return
            if faults.garbage:
                self._send(HTTPStatus.OK, raw=b"<html>injected garbage (--garbage)</html>")
                return
            if self.path.split("?", 1)[0].rstrip("/") == "/rank":
                self._rank_call(body)
                return
            if self.path.split("?", 1)[0].rstrip("/") == "/encode":
                self._encode(body)
                return
            try:
                query, rows, ids = parse_request(body)
            except ProtocolError as exc:
                self._send(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                return
            query_id, test = self._online(ids)
            if service is not None:
                try:
                    answered = self.backend.search(query, rows)
                except UpstreamError as exc:
                    self._send(HTTPStatus.BAD_GATEWAY, {"error": str(exc)})
                    return
                self._answer(
                    answered,
                    rows,
                    fake_ids=faults.unknown_ids,
                    query=query,
                    ids=ids,
                    query_id=query_id,
                    test=test,
                )
                return
            try:
                extra: dict[str, Any] = {}
                if test is None:
                    ranking = self.backend.rank(query, rows)
                elif shares_first_stage(self.backend, test.backend):  # BM25 once for both versions
                    first_stage = bm25_scores(self.backend, query)
                    ranking, extra = self._interleaved(
                        test,
                        self.backend.rank(query, rows, first_stage=first_stage),
                        test.backend.rank(query, rows, first_stage=first_stage),
                        query_id=query_id,
                        rows=rows,
                    )
                else:
                    ranking, extra = self._interleaved(
                        test,
                        self.backend.rank(query, rows),
                        test.backend.rank(query, rows),
                        query_id=query_id,
                        rows=rows,
                    )
            except RankerError as exc:
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": str(exc)})
                return
            payload: dict[str, Any] = {"answers": with_unknown(ranking, rows, faults.unknown_ids)}
            if self.version_label is not None:
                payload["version"] = self.version_label
            if test is not None:
                payload["online_test"] = test.test_id
            self._log(
                payload, query, ids, {"ranker": ranker_name, "version": self.version_label, **extra}, query_id
            )
            self._send(HTTPStatus.OK, payload)

        def _online(self, ids: dict[str, str]) -> tuple[str, OnlineServing | None]:
            """The answer's ``query_id`` (the caller's, or a new one; "" when nothing is logged, as for the
            app's own calls) and the online test that interleaves it, if any."""
            if ubi is None or self.headers.get(APP_TRAFFIC_HEADER):
                return "", None  # nothing logged, or the app's own call (not production traffic)
            query_id = ids.get("query_id") or query_id_new()
            test = online.current if online is not None else None
            return query_id, test if test is not None and test.interleaves(query_id) else None

        def _interleaved(
            self, test: OnlineServing, champion: Ranking, challenger: Ranking, *, query_id: str, rows: int
        ) -> tuple[Ranking, dict[str, Any]]:
            """The team-draft interleaving of both rankings, scored n, n-1, ..., 1 in its order (the two
            versions' scores are on different scales), and what the log records of it."""
            mixed = test.interleave(champion, challenger, query_id=query_id, rows=rows)
            n = len(mixed.hits)
            ranking = Ranking(answers=[(str(hit), float(n - i)) for i, hit in enumerate(mixed.hits)])
            return ranking, test.attributes(mixed.teams)

        def _log(
            self, payload: dict[str, Any], query: Any, ids: dict[str, str], attributes: dict, query_id: str
        ) -> None:
            """Give the answer its ``query_id`` and spool it as a UBI query (``query_attributes``: the
            ranker and version that ranked it, the caller's question id, and when interleaved the online
            test, both versions and each hit's team)."""
            if ubi is None or not query_id:
                return
            payload["query_id"] = query_id
            ubi.query_log(
                query_id=query_id,
                user_query=query.text,
                hit_ids=[answer["id"] for answer in payload["answers"]],
                attributes={**attributes, "question_id": query.external_id},
                client_id=ids.get("client_id", ""),
                user_id=ids.get("user_id", ""),
            )

        def _events(self, body: bytes) -> None:
            if ubi is None:
                self._send(HTTPStatus.NOT_FOUND, {"error": "this server logs nothing (--no-ubi)"})
                return
            try:
                accepted, orphans = ubi.events_accept(body)
            except RecordError as exc:
                error: dict[str, Any] = {"error": str(exc), "field": exc.field}
                if exc.where.startswith(("line ", "index ")):
                    kind, number = exc.where.split()
                    error[kind] = int(number)
                self._send(HTTPStatus.BAD_REQUEST, error)
                return
            except OSError as exc:
                logger.error("ranker_server: cannot spool events: %s", exc)
                self._send(HTTPStatus.SERVICE_UNAVAILABLE, {"error": f"events cannot be kept now: {exc}"})
                return
            self._send(HTTPStatus.ACCEPTED, {"accepted": accepted, "orphans": orphans})

        def _encode(self, body: bytes) -> None:
            """The question's vector for an exported search's {{question_vector}} (docs/rankers.md)."""
            try:
                text = parse_encode_request(body)
            except ProtocolError as exc:
                self._send(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                return
            try:
                vector = question_vectors([text])[0]
            except EmbeddingUnavailable as exc:
                self._send(
                    HTTPStatus.SERVICE_UNAVAILABLE, {"error": f"the embedding model is unavailable: {exc}"}
                )
                return
            self._send(HTTPStatus.OK, {"vector": vector_values(vector)})

        def _rank_call(self, body: bytes) -> None:
            if service is None:
                self._send(
                    HTTPStatus.NOT_FOUND,
                    {
                        "error": "POST /rank (candidates from the caller) is served for engine and http "
                        "rankers; this server ranks with the builtin ranker: POST /"
                    },
                )
                return
            try:
                request = parse_rank_request(body)
            except ProtocolError as exc:
                self._send(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                return
            query_id, test = self._online(request.ids)
            self._answer(
                self.backend.rank(request),
                request.rows,
                fake_ids=0,
                query=request.query,
                ids=request.ids,
                query_id=query_id,
                test=test,
            )

        def _answer(
            self,
            answered: Answered,
            rows: int,
            *,
            fake_ids: int,
            query: Any,
            ids: dict[str, str],
            query_id: str,
            test: OnlineServing | None,
        ) -> None:
            extra: dict[str, Any] = {}
            if test is not None and answered.candidates is not None:
                other = test.backend.rerank(query, answered.candidates, rows)
                ranking, extra = self._interleaved(
                    test, answered.ranking, other.ranking, query_id=query_id, rows=rows
                )
                if other.fallback:
                    extra["challenger_fallback"] = other.fallback
                answered.ranking = ranking
            payload: dict[str, Any] = {
                "answers": with_unknown(answered.ranking, rows, fake_ids),
                "reranked": answered.reranked,
                "version": self.version_label,
            }
            if answered.fallback:
                payload["fallback"] = answered.fallback
            if answered.warning:
                payload["warning"] = answered.warning
            if extra:
                payload["online_test"] = extra["online_test"]
            attributes = {"ranker": ranker_name, "version": self.version_label, "reranked": answered.reranked}
            if answered.fallback:
                attributes["fallback"] = answered.fallback
            self._log(payload, query, ids, {**attributes, **extra}, query_id)
            total = (time.perf_counter() - self.started) * 1000
            timings = [
                f"{name};dur={ms:.3f}"
                for name, ms in (
                    ("engine", answered.engine_ms),
                    ("rerank", answered.rerank_ms),
                    ("total", total),
                )
                if ms is not None
            ]
            self._send(HTTPStatus.OK, payload, headers={"Server-Timing": ", ".join(timings)})

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
            if verbose:
                super().log_message(format, *args)

    return Handler


def with_unknown(ranking: Ranking, rows: int, unknown_ids: int) -> list[dict[str, Any]]:
    """The answers as the protocol sends them, with ``--unknown-ids`` fakes on top when asked."""
    answers: list[dict[str, Any]] = [
        {"id": answer_id, "score": score} for answer_id, score in ranking.answers
    ]
    if unknown_ids:
        top = ranking.answers[0][1] + 1 if ranking.answers else 1.0
        fake = [{"id": f"unknown-{i + 1}", "score": top + unknown_ids - i} for i in range(unknown_ids)]
        answers = (fake + answers)[:rows]
    return answers
