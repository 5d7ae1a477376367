"""Serve a collection's ranker over the HTTP ranker protocol, as a process of its own.

It is the reference implementation of the protocol an ``http`` ranker speaks (see
``rankers/http.py``)::

    POST /     {"question": {"id": "q-17", "text": "..."}, "rows": 10}
    200        {"answers": [{"id": "184", "score": 12.7}, ...]}
    GET /healthz

``--ranker ID`` (default: the collection's default ranker if it is builtin, else plain BM25) and
``--version ID`` (default: the ranker's champion) say what is served:

- a **builtin** ranker: BM25 over the app's copy of the answers, reranked by the version's model;
- an **engine** (or **http**) ranker: POST / calls the engine (or service) with the question, with its
  own timeout and retries, and a trained version reranks its top ``candidates`` answers (the ranker's
  config, default 50; ``rankers.reranking``). Every answer says whether it was reranked, and by which
  version::

      200  {"answers": [...], "reranked": true, "version": "v2"}
      200  {"answers": [...the engine's order...], "reranked": false, "version": "v2",
            "fallback": "reranker took longer than 50 ms"}

  ``reranked`` false with a ``fallback``: the version reranks, but this answer is the engine's own order,
  for the reason given (the rerank took longer than the ranker's ``budget_ms``, it failed, the embedding
  model can't be used, the version's model can't be loaded). ``reranked`` false without ``fallback``: the
  version served ranks as the engine does (e.g. v1, "the engine as it is"). The engine down or answering
  what can't be used: 502 {"error": "engine at ... cannot be reached ..."}.

  ``POST /rank`` is Retrieve and Rank's *rank* call: the caller searched already and sends the
  candidates, best first::

      POST /rank {"question": {"id": "q-17", "text": "..."},
                  "candidates": [{"id": "184", "score": 12.3}, {"id": "29", "score": 11.0}, ...],
                  "rows": 10}
      200        {"answers": [...], "reranked": true, "version": "v2"}

  ``candidates``: at most ``MAX_CANDIDATES`` objects with ``id`` (text or whole number, unique) and
  ``score`` (the engine's score, a finite number): on every candidate or on none. Without scores the
  candidates are scored n, n-1, ..., 1 in the order given (n candidates): the order (the ``engine_rank``
  signal) is the caller's either way, but a version that learned from the engine's scores (the
  ``engine`` signal) then sees other values than it was trained on, and the answer has a ``warning``
  saying so. As in POST /, only the first ``candidates`` are reranked; ids the collection doesn't know
  follow the reranked ones in the order given. ``rows``: 1-1000, default 10. A field that is wrong is a
  400 naming it: {"error": "\\"candidates[3].id\\" repeats \\"candidates[0].id\\" ('184')"}.

**The budget.** The rerank step runs in a worker thread (``RERANK_WORKERS`` of them); the request waits
for it at most ``budget_ms`` (the ranker's config, default 50) from the step's start, then answers the
engine's order (``"fallback": "reranker took longer than 50 ms"``); a rerank still queued then is
cancelled, one running finishes in the background and fills the caches (answer vectors met for the first
time are encoded and kept, on disk too), so the next question meeting those answers is fast. A rerank
that raises is a fallback too, never a 500. The ``Server-Timing`` header gives the milliseconds of the
engine call, of the rerank step and of the whole request from its body read to its answer
(``engine;dur=8.1, rerank;dur=3.2, total;dur=11.9``).

The index, the version's model and the answers' texts are loaded once at start (and the embedding model,
by a warm-up rerank); requests are served by a thread each (``ThreadingHTTPServer``) and never touch the
database. Every error is JSON: 400 for a request that is wrong, 404 for another path, 413 for a body
over 1 MB, 502 when the engine fails, 500 {"error": ...} for a bug.

Fault injection, for tests and benchmarks only (a real service never wants these):
``--latency-ms N`` sleeps N ms before answering; ``--fail-first N`` answers the first N rank requests
with 500; ``--garbage`` answers 200 with a body that is not JSON; ``--unknown-ids N`` puts N answer
ids the collection does not have at the top of every ranking; ``--rerank-delay-ms N`` sleeps N ms in
each rerank step; ``--rerank-fail`` makes each rerank step raise.
"""

from __future__ import annotations

import gc
import json
import logging
import math
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import connections

from corpus.models import Collection
from rankers.backends import RankerError, RankQuery, get_backend, service_backend
from rankers.base import Ranking
from rankers.builtin import BuiltinBackend
from rankers.config import validate_ranker_config
from rankers.engine_config import rerank_settings
from rankers.http import HttpBackend
from rankers.index import load_index
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.reranking import RerankingBackend, reranks
from rankers.selectors import default_ranker, ranking_version

logger = logging.getLogger(__name__)

MAX_BODY_BYTES = 1_000_000
MAX_ROWS = 1000
MAX_CANDIDATES = 1000
MAX_ID_CHARS = 200  # an answer's external id in the collection is at most this long
RERANK_WORKERS = 4


class Faults:
    def __init__(
        self,
        *,
        latency_ms: int,
        fail_first: int,
        garbage: bool,
        unknown_ids: int,
        rerank_delay_ms: int = 0,
        rerank_fail: bool = False,
    ) -> None:
        self.latency = latency_ms / 1000
        self.garbage = garbage
        self.unknown_ids = unknown_ids
        self.rerank_delay = rerank_delay_ms / 1000
        self.rerank_fail = rerank_fail
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


def _query_and_rows(payload: Any) -> tuple[RankQuery, int]:
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


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ProtocolError("body must be JSON") from None


def parse_request(body: bytes) -> tuple[RankQuery, int]:
    """The question and rows of a rank request, or ProtocolError saying what is wrong."""
    return _query_and_rows(_json(body))


@dataclass(frozen=True)
class RankRequest:
    """A ``POST /rank``: the question, the caller's candidates best first, and whether they had scores."""

    query: RankQuery
    candidates: Ranking
    rows: int
    scored: bool


RANK_FIELDS = ("question", "candidates", "rows")
CANDIDATE_FIELDS = ("id", "score")


def parse_rank_request(body: bytes) -> RankRequest:
    """A ``POST /rank`` body checked field by field, or ProtocolError naming the first field that is wrong."""
    payload = _json(body)
    if not isinstance(payload, dict):
        raise ProtocolError('body must be a JSON object with "question", "candidates" and "rows"')
    for name in payload:
        if name not in RANK_FIELDS:
            raise ProtocolError(f'"{name}" is not a field of a rank request ({", ".join(RANK_FIELDS)})')
    query, rows = _query_and_rows(payload)
    if "candidates" not in payload:
        raise ProtocolError('"candidates" is missing: a list of {"id", "score"} objects, best first')
    items = payload["candidates"]
    if not isinstance(items, list):
        raise ProtocolError('"candidates" must be a list of {"id", "score"} objects, best first')
    if len(items) > MAX_CANDIDATES:
        raise ProtocolError(f'"candidates" has {len(items)} items; at most {MAX_CANDIDATES}')
    answers: list[tuple[str, float | None]] = []
    first_at: dict[str, int] = {}
    for i, item in enumerate(items):
        where = f"candidates[{i}]"
        if not isinstance(item, dict):
            raise ProtocolError(f'"{where}" must be an object with "id" and optionally "score"')
        for name in item:
            if name not in CANDIDATE_FIELDS:
                raise ProtocolError(f'"{where}.{name}" is not a field of a candidate (id, score)')
        raw_id = item.get("id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
            raise ProtocolError(f'"{where}.id" must be a non-empty string or a whole number')
        answer_id = str(raw_id).strip()
        if len(answer_id) > MAX_ID_CHARS:
            raise ProtocolError(f'"{where}.id" is longer than {MAX_ID_CHARS} characters')
        if answer_id in first_at:
            raise ProtocolError(
                f'"{where}.id" repeats "candidates[{first_at[answer_id]}].id" ({answer_id!r})'
            )
        first_at[answer_id] = i
        score: float | None = None
        if "score" in item:
            raw_score = item["score"]
            if (
                isinstance(raw_score, bool)
                or not isinstance(raw_score, int | float)
                or not math.isfinite(raw_score)
            ):
                raise ProtocolError(f'"{where}.score" must be a finite number')
            score = float(raw_score)
        answers.append((answer_id, score))
    scored = bool(answers) and answers[0][1] is not None
    for i, (_, score) in enumerate(answers):
        if (score is not None) != scored:
            missing = i if scored else 0
            raise ProtocolError(
                f'"candidates[{missing}].score" is missing: give a score to every candidate or to none'
            )
    n = len(answers)
    ranking = Ranking(
        answers=[
            (answer_id, score if score is not None else float(n - i))
            for i, (answer_id, score) in enumerate(answers)
        ]
    )
    return RankRequest(query=query, candidates=ranking, rows=rows, scored=scored)


@dataclass
class Answered:
    """What an engine ranker's server answers: the ranking, whether the version reordered it and if not,
    why (``fallback``, "" when the version does not rerank), with the milliseconds spent."""

    ranking: Ranking
    reranked: bool
    fallback: str = ""
    warning: str = ""
    engine_ms: float | None = None
    rerank_ms: float | None = None


class UpstreamError(Exception):
    """The engine (or ranker service) failed: a 502 with its message."""


class RerankingService:
    """An engine (or http) ranker's version, served: its service called, the candidates reranked within
    the budget. Holds no database connection; safe to share between the request threads.

    ``reranking`` None: the version ranks as the service does; ``broken`` says why when it was meant to
    rerank but its reranker could not be loaded.
    """

    def __init__(
        self,
        *,
        first: HttpBackend,
        reranking: RerankingBackend | None,
        depth: int,
        budget_ms: int,
        faults: Faults,
        broken: str = "",
        workers: int = RERANK_WORKERS,
    ) -> None:
        self.first = first
        self.reranking = reranking
        self.depth = depth
        self.budget_ms = budget_ms
        self.faults = faults
        self.broken = broken
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rerank")

    @property
    def active(self) -> bool:
        return self.reranking is not None and self.reranking.reranker.active

    def warm_up(self) -> None:
        """Load what the first rerank would (the embedding model, the code paths), encoding nothing new."""
        if self.reranking is None or not self.reranking.index.ids:
            return
        ids = self.reranking.index.ids[: self.depth]
        candidates = Ranking(answers=[(answer_id, float(len(ids) - i)) for i, answer_id in enumerate(ids)])
        self.reranking.rerank_why(RankQuery("warm-up", "warm up"), candidates, 10, encode=False)

    def search(self, query: RankQuery, rows: int) -> Answered:
        """POST /: the service's answers to ``query``, reranked within the budget. UpstreamError when the
        service fails."""
        started = time.perf_counter()
        try:
            ranking = self.first.rank(query, max(rows, self.depth) if self.active else rows)
        except RankerError as exc:
            raise UpstreamError(str(exc)) from exc
        engine_ms = (time.perf_counter() - started) * 1000
        answered = self.rerank(query, ranking, rows)
        answered.engine_ms = engine_ms
        return answered

    def rank(self, request: RankRequest) -> Answered:
        """POST /rank: the caller's candidates reranked within the budget."""
        answered = self.rerank(request.query, request.candidates, request.rows)
        signals = self.reranking.reranker.signals if self.reranking is not None else ()
        if not request.scored and request.candidates.answers and "engine" in signals:
            n = len(request.candidates.answers)
            answered.warning = (
                f"the candidates have no scores: the version's engine signal was given {n}, {n - 1}, ..., 1 "
                "in their order, not the engine's scores it learned from"
            )
        return answered

    def rerank(self, query: RankQuery, ranking: Ranking, rows: int) -> Answered:
        """``ranking`` (the service's, best first) reranked if that takes at most the budget, else its
        own order with the reason."""
        own = Ranking(answers=ranking.answers[:rows], unknown_ids=ranking.unknown_ids)
        if self.reranking is None:
            return Answered(ranking=own, reranked=False, fallback=self.broken)
        if not ranking.answers:
            return Answered(ranking=own, reranked=False, fallback="there are no answers to rerank")
        started = time.perf_counter()
        future = self.pool.submit(self._rerank, query, ranking, rows)
        try:
            reranked, why = future.result(timeout=self.budget_ms / 1000)
        except FutureTimeout:
            future.cancel()  # still queued: never run; running: finishes and warms the caches
            reranked, why = own, f"reranker took longer than {self.budget_ms} ms"
        except Exception as exc:
            logger.exception("rerank of question %s failed", query.external_id)
            reranked, why = own, f"reranker failed: {str(exc) or repr(exc)}"
        elapsed = (time.perf_counter() - started) * 1000
        return Answered(ranking=reranked, reranked=not why, fallback=why, rerank_ms=elapsed)

    def _rerank(self, query: RankQuery, ranking: Ranking, rows: int) -> tuple[Ranking, str]:
        assert self.reranking is not None
        if self.faults.rerank_delay:
            time.sleep(self.faults.rerank_delay)
        if self.faults.rerank_fail:
            raise RuntimeError("injected failure (--rerank-fail)")
        return self.reranking.rerank_why(query, ranking, rows)


def make_handler(
    *,
    backend: Any,
    faults: Faults,
    health: dict[str, Any],
    verbose: bool,
    version_label: str | None = None,
) -> type:
    """The request handler. ``backend``: a BuiltinBackend (answers as the protocol has them) or a
    RerankingService (answers saying ``reranked`` and ``version``, and ``POST /rank``)."""
    service = backend if isinstance(backend, RerankingService) else None

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: the trainer's client reuses connections
        # Headers and body go out in two writes: without TCP_NODELAY, Nagle + delayed ACK add ~40 ms each.
        disable_nagle_algorithm = True
        server_version = "RankTrainerRankerServer/1"
        started = 0.0  # when the request's body was read (perf_counter)

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
                self._send(HTTPStatus.OK, health)
            else:
                self._send(HTTPStatus.NOT_FOUND, {"error": "POST a question to / ; GET /healthz"})

        def do_POST(self) -> None:  # noqa: N802
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
            try:
                query, rows = parse_request(body)
            except ProtocolError as exc:
                self._send(HTTPStatus.BAD_REQUEST, {"error": str(exc)})
                return
            if service is not None:
                try:
                    answered = service.search(query, rows)
                except UpstreamError as exc:
                    self._send(HTTPStatus.BAD_GATEWAY, {"error": str(exc)})
                    return
                self._answer(answered, rows, fake_ids=faults.unknown_ids)
                return
            try:
                ranking = backend.rank(query, rows)
            except RankerError as exc:
                self._send(HTTPStatus.INTERNAL_SERVER_ERROR, {"error": str(exc)})
                return
            self._send(HTTPStatus.OK, {"answers": with_unknown(ranking, rows, faults.unknown_ids)})

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
            self._answer(service.rank(request), request.rows, fake_ids=0)

        def _answer(self, answered: Answered, rows: int, *, fake_ids: int) -> None:
            payload: dict[str, Any] = {
                "answers": with_unknown(answered.ranking, rows, fake_ids),
                "reranked": answered.reranked,
                "version": version_label,
            }
            if answered.fallback:
                payload["fallback"] = answered.fallback
            if answered.warning:
                payload["warning"] = answered.warning
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


def reranking_service(
    ranker: Ranker, version: RankerVersion | None, faults: Faults, *, budget_ms: int | None = None
) -> tuple[RerankingService, RankerVersion | None]:
    """The service of an engine or http ranker's ``version`` (None: its champion), loaded now, and the
    version served. A version whose reranker can't be loaded is served as the engine's order, saying why.
    ``budget_ms`` None: the ranker's config says."""
    try:
        config = validate_ranker_config(kind=ranker.kind, config=ranker.config)
        first = service_backend(ranker, config)
    except (ValidationError, RankerError) as exc:
        raise CommandError(f"ranker {ranker.name!r} cannot be served: {exc}") from exc
    if version is None:
        version = ranking_version(ranker=ranker)
    depth, configured_ms = rerank_settings(config)
    budget_ms = configured_ms if budget_ms is None else budget_ms
    reranking: RerankingBackend | None = None
    broken = ""
    if reranks(version):
        try:
            backend = get_backend(ranker, version)
        except RankerError as exc:
            broken = f"the reranker of version {version.label if version else '?'} cannot be loaded: {exc}"
        else:
            assert isinstance(backend, RerankingBackend)
            reranking = backend
    service = RerankingService(
        first=first, reranking=reranking, depth=depth, budget_ms=budget_ms, faults=faults, broken=broken
    )
    return service, version


class Command(BaseCommand):
    help = (
        "Serve a collection's ranker over the HTTP ranker protocol (POST /, GET /healthz): its builtin "
        "ranker, or an engine or http ranker's version reranking the engine's answers (and POST /rank)."
    )

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
            help="id of a ranker of the collection whose champion to serve: builtin, or an engine or http "
            "ranker whose trained version reranks the engine's answers (default: the collection's "
            "default ranker if builtin, else plain BM25)",
        )
        parser.add_argument(
            "--version", type=int, metavar="ID", help="serve this version of the ranker instead"
        )
        parser.add_argument(
            "--budget-ms",
            type=int,
            help="engine and http rankers: how long a rerank may take before the engine's order is answered "
            "(default: the ranker's budget_ms config, 50 when unset)",
        )
        faults = parser.add_argument_group("fault injection (tests and benchmarks only)")
        faults.add_argument("--latency-ms", type=int, default=0, help="sleep this long before each answer")
        faults.add_argument(
            "--fail-first", type=int, default=0, help="answer the first N rank requests with 500"
        )
        faults.add_argument("--garbage", action="store_true", help="answer 200 with a body that is not JSON")
        faults.add_argument("--unknown-ids", type=int, default=0, help="put N unknown answer ids on top")
        faults.add_argument(
            "--rerank-delay-ms",
            type=int,
            default=0,
            help="sleep this long in each rerank step (engine rankers)",
        )
        faults.add_argument(
            "--rerank-fail", action="store_true", help="make each rerank step raise (engine rankers)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        collection = Collection.objects.filter(slug=options["collection"]).first()
        if collection is None:
            raise CommandError(f"no collection with slug {options['collection']!r}")
        for name in ("latency_ms", "fail_first", "unknown_ids", "rerank_delay_ms"):
            if options[name] < 0:
                raise CommandError(f"--{name.replace('_', '-')} must be 0 or more")
        if options["budget_ms"] is not None and not 1 <= options["budget_ms"] <= 10_000:
            raise CommandError("--budget-ms must be from 1 to 10000")
        ranker: Ranker | None
        if options["ranker"] is not None:
            ranker = Ranker.objects.filter(pk=options["ranker"], collection=collection).first()
            if ranker is None:
                raise CommandError(f"collection {collection.slug} has no ranker with id {options['ranker']}")
        else:
            ranker = default_ranker(collection=collection)
            if ranker is not None and ranker.kind != RankerKind.BUILTIN:
                ranker = None
        version_asked: RankerVersion | None = None
        if options["version"] is not None:
            version_asked = RankerVersion.objects.filter(pk=options["version"], ranker=ranker).first()
            if ranker is None or version_asked is None:
                raise CommandError(f"the ranker served has no version with id {options['version']}")
        faults = Faults(
            latency_ms=options["latency_ms"],
            fail_first=options["fail_first"],
            garbage=options["garbage"],
            unknown_ids=options["unknown_ids"],
            rerank_delay_ms=options["rerank_delay_ms"],
            rerank_fail=options["rerank_fail"],
        )
        backend: BuiltinBackend | RerankingService
        version: RankerVersion | None
        if ranker is not None and ranker.kind != RankerKind.BUILTIN:
            service, version = reranking_service(
                ranker, version_asked, faults, budget_ms=options["budget_ms"]
            )
            index = service.reranking.index if service.reranking else load_index(collection=collection)
            health = {
                "status": "ok",
                "collection": collection.slug,
                "answers": index.size,
                "ranker": ranker.name,
                "version": version.label if version else None,
                "uses_model": service.active,
                "kind": ranker.kind,
                "first_stage": service.first.url,
                "reranks": service.reranking is not None,
                "candidates": service.depth,
                "budget_ms": service.budget_ms,
                "fallback": service.broken or None,
            }
            service.warm_up()
            backend = service
        else:
            try:
                served = (
                    get_backend(ranker, version_asked)
                    if ranker is not None
                    else BuiltinBackend(collection=collection)
                )
            except RankerError as exc:
                raise CommandError(str(exc)) from exc
            assert isinstance(served, BuiltinBackend)
            backend = served
            version = backend.version
            health = {
                "status": "ok",
                "collection": collection.slug,
                "answers": backend.index.size,
                "ranker": ranker.name if ranker else "BM25",
                "version": version.label if version else None,
                "uses_model": backend.model is not None,
            }
        connections.close_all()  # requests never use the database
        # What is loaded now lives as long as the process: out of the collector's sight, a full
        # collection no longer walks the index and the models (tens of ms, at any request's expense).
        gc.collect()
        gc.freeze()
        handler = make_handler(
            backend=backend,
            faults=faults,
            health=health,
            verbose=options["verbosity"] >= 2,
            version_label=version.label if version else None,
        )
        server = Server((options["host"], options["port"]), handler)
        host, port = options["host"], server.server_address[1]
        self.stdout.write(
            f"ranker_server: {collection.slug} ({health['answers']} answers, {health['ranker']}"
            f"{' ' + version.label if version else ''}) on http://{host}:{port}/"
        )
        if health.get("fallback"):
            self.stdout.write(f"ranker_server: answering the engine's order: {health['fallback']}")
        self.stdout.flush()
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
            if isinstance(backend, RerankingService):
                backend.pool.shutdown(wait=False, cancel_futures=True)
