"""Rankers that call a search engine directly (Elasticsearch, OpenSearch, Solr, or any JSON engine).

The config (``rankers/engine_config/``) is a request template and a response mapping. Per question:
the template is filled (structurally, see ``fill_template``), sent to ``url`` with the method, headers,
query-string parameters and JSON body it names, and the hits list the mapping points at becomes the
ranking, best first.

It is an ``HttpBackend`` (``rankers/http.py``) with another request and another response: same client
(outbound policy checked at connection time, no redirects, no proxies), same timeout, same retries
(a timeout, refused connection or 5xx is retried with backoff, then ``RankerUnavailable``) and the same
error types, so evaluations, the rating queue and the Rankers pages use it unchanged.

Errors say exactly what went wrong, as ``EngineError``/``EngineUnavailable`` with ``part`` (the mapping
path that failed, hits counted from 0: ``response.hits.hits[3]._id missing``) and ``engine_message``
(the engine's own error, from the ``response.errors`` paths: Elasticsearch ``error.root_cause[0].reason``,
Solr ``error.msg``), shortened to one line of at most 200 characters. The body itself is never quoted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection as Container
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

import httpx

from rankers.base import RankerError, RankerUnavailable, Ranking, RankQuery
from rankers.engine_config import fill_params, fill_template
from rankers.http import HttpBackend, _short, _status, unreachable_reason
from rankers.outbound import OutboundRefused

ENGINE_MESSAGE_CHARS = 200


class EngineError(RankerError):
    """The engine's answer can't be used. ``part``: the mapping path that failed; ``engine_message``: the
    engine's own error message; ``status``: its HTTP status (each None when not known)."""

    def __init__(
        self,
        message: str,
        *,
        part: str | None = None,
        engine_message: str | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.part = part
        self.engine_message = engine_message
        self.status = status


class EngineUnavailable(RankerUnavailable, EngineError):
    """A timeout, refused connection or 5xx (retried), with the engine's message when it sent one."""


@dataclass(frozen=True)
class PreparedRequest:
    method: str
    params: list[tuple[str, Any]]
    form: list[tuple[str, str]] | None  # None: no form body
    body: Any  # None: no body
    has_body: bool
    url: str | None = None  # None: the ranker's URL; else another URL of the same engine (rankers.export)
    ndjson: bool = False  # the body is a list of JSON lines (OpenSearch's _bulk)


def _segments(path: str) -> list[str]:
    return path.split(".")


def _shown(prefix: str, segments: list[str]) -> str:
    """A path as the user reads it: list indexes in brackets (``response.hits.hits[3]._id``)."""
    text = prefix
    for segment in segments:
        text += f"[{segment}]" if segment.isdigit() else f".{segment}"
    return text


_MISSING = object()


def lookup(value: Any, path: str, prefix: str) -> Any:
    """The value at the dotted ``path`` in ``value``, or EngineError naming the first part that is
    missing, e.g. ``response.hits.hits missing``."""
    segments = _segments(path)
    for i, segment in enumerate(segments):
        if isinstance(value, dict) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            where = _shown(prefix, segments[: i + 1])
            raise EngineError(f"{where} missing", part=where)
    return value


def engine_message(payload: Any, paths: list[str]) -> str | None:
    """The engine's error message: the first of ``paths`` holding text, on one line, shortened."""
    for path in paths:
        try:
            value = lookup(payload, path, "")
        except EngineError:
            continue
        if isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            return text if len(text) <= ENGINE_MESSAGE_CHARS else text[:ENGINE_MESSAGE_CHARS] + "…"
    return None


def map_hits(payload: Any, mapping: dict[str, Any], *, k: int, known_ids: Container[str] | None) -> Ranking:
    """The ranking in a decoded response: the list at ``mapping["hits"]``, each hit's id and score at
    ``mapping["id"]`` and ``mapping["score"]``. EngineError names the path that failed."""
    hits = lookup(payload, mapping["hits"], "response")
    hits_path = _shown("response", _segments(mapping["hits"]))
    if not isinstance(hits, list):
        raise EngineError(f"{hits_path} is not a list", part=hits_path)
    answers: list[tuple[str, float]] = []
    first_at: dict[str, int] = {}
    for i, hit in enumerate(hits[:k]):
        prefix = f"{hits_path}[{i}]"
        raw_id = lookup(hit, mapping["id"], prefix)
        id_path = _shown(prefix, _segments(mapping["id"]))
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or str(raw_id).strip() == "":
            raise EngineError(f"{id_path} is not a non-empty text or whole number", part=id_path)
        answer_id = str(raw_id).strip()
        score = lookup(hit, mapping["score"], prefix)
        score_path = _shown(prefix, _segments(mapping["score"]))
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            hint = " (Elasticsearch leaves _score null when sorting by a field)" if score is None else ""
            raise EngineError(f"{score_path} is not a number{hint}", part=score_path)
        if answer_id in first_at:
            raise EngineError(
                f"{id_path} {_short(answer_id)!r} repeats {hits_path}[{first_at[answer_id]}]", part=id_path
            )
        first_at[answer_id] = i
        answers.append((answer_id, float(score)))
    unknown = [a for a, _ in answers if known_ids is not None and a not in known_ids]
    return Ranking(answers=answers, unknown_ids=unknown)


def prepare(config: dict[str, Any], *, question: str, rows: int) -> PreparedRequest:
    """The request for one question: the template with its placeholders filled."""
    request = config["request"]
    return PreparedRequest(
        method=request["method"],
        params=fill_params(request.get("params", {}), question=question, rows=rows),
        form=fill_params(request["form"], question=question, rows=rows) if "form" in request else None,
        body=fill_template(request["body"], question=question, rows=rows) if "body" in request else None,
        has_body="body" in request,
    )


class EngineBackend(HttpBackend):
    """Ranks by querying a search engine. Safe to share between threads (one connection pool)."""

    def __init__(
        self,
        *,
        config: dict[str, Any],
        known_ids: Container[str] | None = None,
    ) -> None:
        http_config: dict[str, Any] = {
            "url": config["url"],
            "timeout": config["timeout"],
            "retries": config["retries"],
            "headers": config["request"].get("headers", {}),
        }
        if config.get("auth_header"):
            http_config["auth_header"] = config["auth_header"]
        super().__init__(config=http_config, known_ids=known_ids)
        self.config = config
        self.mapping = config["response"]

    def _where(self, url: str | None = None) -> str:
        return f"engine at {url or self.url}"

    def _message_of(self, response: httpx.Response) -> str | None:
        try:
            payload = json.loads(response.content)
        except (json.JSONDecodeError, UnicodeDecodeError):
            return None
        return engine_message(payload, self.mapping.get("errors", []))

    def _send(self, prepared: PreparedRequest) -> httpx.Response:
        """One attempt. EngineUnavailable for what may pass when retried, EngineError for the rest."""
        content: bytes | None = None
        headers: dict[str, str] | None = None
        if prepared.form is not None:
            # Each parameter is percent-encoded on its own (urlencode), so "&" or "=" stay inside it.
            content = urlencode(prepared.form).encode()
            headers = {"Content-Type": "application/x-www-form-urlencoded"}
        elif prepared.ndjson:
            content = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in prepared.body).encode()
            headers = {"Content-Type": "application/x-ndjson"}
        elif prepared.has_body:
            # The JSON encoder escapes the question (quotes, backslashes, control characters);
            # non-ASCII stays UTF-8, as the engines expect.
            content = json.dumps(prepared.body, ensure_ascii=False).encode()
            headers = {"Content-Type": "application/json"}
        try:
            response = self.client.request(
                prepared.method,
                prepared.url or self.url,
                params=prepared.params or None,
                content=content,
                headers=headers,
            )
        except OutboundRefused as exc:
            raise EngineError(f"{self._where(prepared.url)}: {exc}") from None
        except httpx.TimeoutException as exc:
            raise EngineUnavailable(
                f"{self._where(prepared.url)} did not answer within {self.timeout:g} s"
            ) from exc
        except httpx.TransportError as exc:
            raise EngineUnavailable(
                f"{self._where(prepared.url)} cannot be reached: {unreachable_reason(exc)}"
            ) from exc
        status = response.status_code
        if status == 200:
            return response
        said = self._message_of(response) if status >= 400 else None
        text = f"{self._where(prepared.url)} answered {_status(response)}" + (f": {said}" if said else "")
        if status >= 500:
            raise EngineUnavailable(text, engine_message=said, status=status)
        if 300 <= status < 400:
            raise EngineError(text + "; redirects are not followed", status=status)
        raise EngineError(text, engine_message=said, status=status)

    def fetch(self, prepared: PreparedRequest) -> Any:
        """The decoded JSON answer to one prepared request, retried as ``rank`` is (EngineUnavailable),
        EngineError for the rest; for other requests to the same engine (``rankers.export``)."""
        response = self._retrying(lambda: self._send(prepared))
        try:
            return json.loads(response.content)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise EngineError(
                f"{self._where()} answered 200 with a body that is not JSON", part="response", status=200
            ) from exc

    def rank(self, query: RankQuery, k: int) -> Ranking:
        payload = self.fetch(prepare(self.config, question=query.text, rows=k))
        try:
            return map_hits(payload, self.mapping, k=k, known_ids=self.known_ids)
        except EngineError as exc:
            raise EngineError(f"{self._where()}: {exc}", part=exc.part, status=200) from None
