"""A local stand-in for Elasticsearch, OpenSearch and Solr: their documented request and response shapes,
errors included, over a set of documents with a simple scorer. For tests and ``manage.py engine_server``;
no search engine runs here.

Endpoints (one server answers all of them):

- ``GET|POST /<index>/_search`` (Elasticsearch/OpenSearch): query DSL body (``size``, ``from``,
  ``query`` with ``match_all``, ``match``, ``multi_match``, ``query_string``, ``bool``, OpenSearch
  ``neural`` and ``hybrid``) or the URI search parameters ``q`` and ``size``; ``search_pipeline`` must name
  a pipeline the server knows (``pipelines``), and a ``hybrid`` query needs one. Answers
  ``{"took", "timed_out", "_shards", "hits": {"total": {"value", "relation"}, "max_score", "hits":
  [{"_index", "_id", "_score", "_source"}]}}``; errors are ``{"error": {"root_cause": [{"type",
  "reason"}], "type", "reason"}, "status"}`` (unknown index 404 ``index_not_found_exception``, a query
  it can't parse 400 ``parsing_exception``, a body that is not JSON 400 ``x_content_parse_exception``).
- ``GET|POST /solr/<core>/select`` (Solr): parameters ``q``, ``rows``, ``start``, ``fl``, ``qf``,
  ``defType``, ``wt`` (in the query string or a form-encoded body). Answers ``{"responseHeader":
  {"status": 0, "QTime", "params"}, "response": {"numFound", "start", "maxScore", "docs": [...]}}``; errors
  are ``{"responseHeader": {"status", "QTime"}, "error": {"metadata": [...], "msg", "code"}}`` (``qf``
  naming a field the documents don't have: 400 ``undefined field``); an unknown core is Jetty's HTML 404.

Scoring: the sum over the question's distinct terms of idf × tf / (tf + 1) over title and text (lower
case, ``\\w+`` terms), ties by id; ``score`` in ``fl`` and ``_score`` are that number.

Faults (``Faults``, settable while the server runs): ``error_status`` answers every search with that
status and the engine's error JSON; ``fail_first`` answers the next N searches 503 (with the engine's
error JSON); ``latency_ms`` sleeps before answering; ``garbage`` answers 200 with a body that is not
JSON; ``drop`` removes a field (``"_id"``, ``"_score"``, ``"id"``, ``"score"``) from the hit at
``drop_at``. Every request is recorded (``requests``) so tests can check what the ranker sent.
"""

from __future__ import annotations

import json
import math
import re
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qsl, urlsplit

_TERM = re.compile(r"\w+")


@dataclass
class Faults:
    error_status: int | None = None
    fail_first: int = 0
    latency_ms: int = 0
    garbage: bool = False
    drop: str | None = None
    drop_at: int = 0


@dataclass
class Recorded:
    method: str
    path: str
    query: str  # the raw query string, as sent
    headers: dict[str, str]
    body: bytes


class QueryError(ValueError):
    pass


@dataclass
class Documents:
    """Documents by id (``{"title": ..., "text": ...}``), with their term counts for scoring."""

    docs: dict[str, dict[str, str]]
    terms: dict[str, Counter] = field(init=False)
    df: Counter = field(init=False)

    def __post_init__(self) -> None:
        self.terms = {
            doc_id: Counter(_TERM.findall(" ".join(str(v) for v in doc.values()).lower()))
            for doc_id, doc in self.docs.items()
        }
        self.df = Counter(term for counts in self.terms.values() for term in counts)

    def fields(self) -> set[str]:
        return {name for doc in self.docs.values() for name in doc} | {"id"}

    def score(self, text: str) -> list[tuple[str, float]]:
        """Documents matching any term, best first (ties by id)."""
        n = len(self.docs)
        scored = []
        for doc_id, counts in self.terms.items():
            score = 0.0
            for term in set(_TERM.findall(text.lower())):
                tf = counts.get(term, 0)
                if tf:
                    score += math.log(1 + n / self.df[term]) * tf / (tf + 1)
            if score > 0:
                scored.append((doc_id, round(score, 6)))
        return sorted(scored, key=lambda item: (-item[1], item[0]))

    def all(self) -> list[tuple[str, float]]:
        return [(doc_id, 1.0) for doc_id in sorted(self.docs)]


def _query_text(query: Any) -> str | None:
    """The text of an Elasticsearch query (None: match_all). QueryError for what it can't parse."""
    if not isinstance(query, dict) or len(query) != 1:
        raise QueryError("query malformed, must start with start_object")
    ((kind, spec),) = query.items()
    if kind == "match_all":
        return None
    if kind in {"multi_match", "query_string", "simple_query_string"}:
        if not isinstance(spec, dict) or not isinstance(spec.get("query"), str):
            raise QueryError(f"[{kind}] requires query value")
        return spec["query"]
    if kind == "match":
        if not isinstance(spec, dict) or len(spec) != 1:
            raise QueryError("[match] query doesn't support multiple fields")
        (value,) = spec.values()
        value = value.get("query") if isinstance(value, dict) else value
        if not isinstance(value, str):
            raise QueryError("[match] unknown token [START_ARRAY] after [query]")
        return value
    if kind == "neural":
        (value,) = spec.values() if isinstance(spec, dict) and len(spec) == 1 else (None,)
        if not isinstance(value, dict) or not isinstance(value.get("query_text"), str):
            raise QueryError("[neural] query_text is required")
        if not value.get("model_id"):
            raise QueryError("[neural] model_id is required")
        return value["query_text"]
    if kind == "bool":
        texts = []
        for clause in ("must", "should"):
            items = spec.get(clause, []) if isinstance(spec, dict) else []
            for item in items if isinstance(items, list) else [items]:
                text = _query_text(item)
                if text:
                    texts.append(text)
        return " ".join(texts)
    if kind == "hybrid":
        queries = spec.get("queries") if isinstance(spec, dict) else None
        if not isinstance(queries, list) or not queries:
            raise QueryError("[hybrid] requires 'queries' field with at least one clause")
        return " ".join(t for t in (_query_text(q) for q in queries) if t)
    raise QueryError(f"unknown query [{kind}]")


def _es_error(kind: str, reason: str, status: int, **extra: Any) -> tuple[int, dict[str, Any]]:
    cause = {"type": kind, "reason": reason, **extra}
    return status, {"error": {"root_cause": [cause], **cause}, "status": status}


def _solr_error(msg: str, code: int) -> tuple[int, dict[str, Any]]:
    return code, {
        "responseHeader": {"status": code, "QTime": 0},
        "error": {
            "metadata": ["error-class", "org.apache.solr.common.SolrException"],
            "msg": msg,
            "code": code,
        },
    }


class EngineServer(ThreadingHTTPServer):
    """Serves ``documents`` as the indexes ``indexes`` (Elasticsearch/OpenSearch) and the cores
    ``cores`` (Solr). ``start()`` serves from a thread; ``url`` is its address."""

    daemon_threads = True
    request_queue_size = 256

    def __init__(
        self,
        documents: dict[str, dict[str, str]],
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        indexes: tuple[str, ...] = ("answers",),
        cores: tuple[str, ...] = ("answers",),
        pipelines: tuple[str, ...] = ("nlp-search-pipeline",),
    ) -> None:
        super().__init__((host, port), _Handler)
        self.documents = Documents(documents)
        self.indexes, self.cores, self.pipelines = set(indexes), set(cores), set(pipelines)
        self.faults = Faults()
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> EngineServer:
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], BrokenPipeError | ConnectionResetError):
            return  # the client gave up waiting (a timeout being tested): nothing to report
        super().handle_error(request, client_address)

    def record(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)

    def take_failure(self) -> bool:
        with self._lock:
            if self.faults.fail_first > 0:
                self.faults.fail_first -= 1
                return True
            return False

    # --- Elasticsearch / OpenSearch ---------------------------------------------------------------

    def es_search(self, index: str, params: dict[str, str], body: bytes) -> tuple[int, Any]:
        started = time.monotonic()
        if index not in self.indexes:
            return _es_error(
                "index_not_found_exception", f"no such index [{index}]", 404, index=index, resource_id=index
            )
        pipeline = params.get("search_pipeline")
        if pipeline is not None and pipeline not in self.pipelines:
            return _es_error("resource_not_found_exception", f"Pipeline {pipeline} is not defined", 404)
        size: Any = 10
        offset: Any = 0
        text = params.get("q")
        if body.strip():
            try:
                request = json.loads(body)
            except (json.JSONDecodeError, UnicodeDecodeError):
                return _es_error(
                    "x_content_parse_exception", "[1:2] Unexpected character in request body", 400
                )
            if not isinstance(request, dict):
                return _es_error("parsing_exception", "request body must be an object", 400)
            try:
                if "query" in request:
                    if "hybrid" in request["query"] and pipeline is None:
                        raise QueryError("hybrid query must be run with a search pipeline (search_pipeline)")
                    text = _query_text(request["query"])
            except QueryError as exc:
                return _es_error("parsing_exception", str(exc), 400, line=1, col=10)
            size, offset = request.get("size", size), request.get("from", offset)
        if "size" in params:
            size = params["size"]
        try:
            size, offset = int(size), int(offset)
        except (TypeError, ValueError):
            return _es_error(
                "illegal_argument_exception", f"Failed to parse int parameter [size] with value [{size}]", 400
            )
        if size < 0:
            return _es_error(
                "illegal_argument_exception", f"[size] parameter cannot be negative, found [{size}]", 400
            )
        matches = self.documents.all() if text is None else self.documents.score(text)
        hits = [
            {"_index": index, "_id": doc_id, "_score": score, "_source": self.documents.docs[doc_id]}
            for doc_id, score in matches[offset : offset + size]
        ]
        return 200, {
            "took": round((time.monotonic() - started) * 1000),
            "timed_out": False,
            "_shards": {"total": 1, "successful": 1, "skipped": 0, "failed": 0},
            "hits": {
                "total": {"value": len(matches), "relation": "eq"},
                "max_score": matches[0][1] if matches else None,
                "hits": hits,
            },
        }

    # --- Solr -----------------------------------------------------------------------------------

    def solr_select(self, core: str, params: dict[str, str]) -> tuple[int, Any]:
        started = time.monotonic()
        if "q" not in params:
            return _solr_error("no query specified: q is required", 400)
        qf = params.get("qf", "")
        known = self.documents.fields()
        for name in (part.split("^")[0] for part in qf.split()):
            if name not in known:
                return _solr_error(f"undefined field {name}", 400)
        try:
            rows, start = int(params.get("rows", "10")), int(params.get("start", "0"))
        except ValueError:
            return _solr_error(f"Invalid Number: {params.get('rows')}", 400)
        text = params["q"]
        matches = self.documents.all() if text.strip() in {"*:*", ""} else self.documents.score(text)
        fl = [f.strip() for f in params.get("fl", "*").split(",") if f.strip()]
        docs = []
        for doc_id, score in matches[start : start + rows]:
            full = {"id": doc_id, **self.documents.docs[doc_id], "score": score}
            docs.append({k: v for k, v in full.items() if "*" in fl or k in fl})
        return 200, {
            "responseHeader": {
                "status": 0,
                "QTime": round((time.monotonic() - started) * 1000),
                "params": params,
            },
            "response": {
                "numFound": len(matches),
                "start": start,
                "maxScore": matches[0][1] if matches else 0.0,
                "numFoundExact": True,
                "docs": docs,
            },
        }


class _Handler(BaseHTTPRequestHandler):
    server: EngineServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        self._handle()

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        self._handle()

    def _send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, status: int, payload: Any) -> None:
        self._send(status, json.dumps(payload).encode(), "application/json; charset=UTF-8")

    def _handle(self) -> None:
        server = self.server
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        parts = urlsplit(self.path)
        server.record(
            Recorded(
                self.command, parts.path, parts.query, {k.lower(): v for k, v in self.headers.items()}, body
            )
        )
        if parts.path == "/healthz":
            self._json(200, {"status": "ok"})
            return
        params = dict(parse_qsl(parts.query, keep_blank_values=True))
        segments = [s for s in parts.path.split("/") if s]
        solr = len(segments) == 3 and segments[0] == "solr" and segments[2] == "select"
        search = len(segments) == 2 and segments[1] == "_search"
        if not (solr or search):
            self._send(404, b"<html><body><h2>HTTP ERROR 404 Not Found</h2></body></html>", "text/html")
            return
        if solr and segments[1] not in server.cores:
            self._send(404, b"<html><body><h2>HTTP ERROR 404 Not Found</h2></body></html>", "text/html")
            return
        faults = server.faults
        if faults.latency_ms:
            time.sleep(faults.latency_ms / 1000)
        if faults.error_status or server.take_failure():
            status = faults.error_status or 503
            if solr:
                self._json(*_solr_error("org.apache.solr.search.SyntaxError: Cannot parse 'x'", status))
            elif status >= 500:
                self._json(*_es_error("search_phase_execution_exception", "all shards failed", status))
            else:
                self._json(*_es_error("security_exception", "unable to authenticate user [trainer]", status))
            return
        if faults.garbage:
            self._send(200, b"<html>not json</html>", "text/html")
            return
        if solr:
            if self.command == "POST" and "x-www-form-urlencoded" in self.headers.get("Content-Type", ""):
                params.update(parse_qsl(body.decode("utf-8", "replace"), keep_blank_values=True))
            status, payload = server.solr_select(segments[1], params)
        else:
            status, payload = server.es_search(segments[0], params, body)
        if status == 200 and faults.drop:
            hits = payload["response"]["docs"] if solr else payload["hits"]["hits"]
            if faults.drop_at < len(hits):
                hits[faults.drop_at].pop(faults.drop, None)
        self._json(status, payload)
