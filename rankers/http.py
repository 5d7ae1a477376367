"""Any ranker service that speaks this HTTP protocol (``manage.py ranker_server`` is a reference server).

Request, ``POST <url>`` with ``Content-Type: application/json``::

    {"question": {"id": "q-17", "text": "what is the boundary layer ..."}, "rows": 10}

Response, ``200`` with the answers best first (at most ``rows``; extra ones are ignored)::

    {"answers": [{"id": "184", "score": 12.7}, {"id": "29", "score": 11.2}]}

- A timeout, a refused connection or a 5xx is retried ``retries`` times (config), waiting 0.1 s, 0.2 s,
  0.4 s ... (at most 2 s) between attempts; then it raises ``RankerUnavailable`` saying how many attempts
  it made. This is the only retry layer: evaluations and the rating queue call ``rank`` once.
- Anything else that is wrong raises ``RankerError`` at once, naming the problem: a 4xx, a body that is
  not JSON, no ``answers`` list, an answer without an ``id`` or with a non-numeric ``score``, an id listed
  twice.
- Ids the collection does not know are kept in their rank (they count as unlabelled) and listed in
  ``Ranking.unknown_ids``.
- Every connection follows the outbound policy (``rankers/outbound.py``: never link-local or metadata
  addresses; loopback and private networks only with ``OUTBOUND_ALLOW_PRIVATE``), checked after DNS
  resolution; a refused address is a ``RankerError`` (not retried). Redirects are not followed (a 3xx is
  a ``RankerError``).
- Errors quote the far side's status, never its body: whatever a URL answers (an internal page, a
  metadata document) is not shown to the trainer who configured it.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from collections.abc import Collection as Container
from typing import Any

import httpx

from rankers.base import RankerError, RankerUnavailable, Ranking, RankQuery
from rankers.config import HTTP_DEFAULTS
from rankers.outbound import OutboundRefused, guarded_client
from ubi.log import APP_TRAFFIC_HEADER

BACKOFF_FIRST = 0.1
BACKOFF_MAX = 2.0


def _short(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit] + "…"


def _status(response: httpx.Response) -> str:
    """The far side's answer as a short line: status code and standard reason, never its body."""
    return f"{response.status_code} {response.reason_phrase}".strip()


def parse_ranking(payload: Any, *, k: int, known_ids: Container[str] | None) -> Ranking:
    """Check a decoded response body and turn it into a Ranking (RankerError naming what is wrong)."""
    if not isinstance(payload, dict) or not isinstance(payload.get("answers"), list):
        raise RankerError('response must be a JSON object with an "answers" list')
    answers: list[tuple[str, float]] = []
    seen: set[str] = set()
    for position, item in enumerate(payload["answers"][:k], start=1):
        if not isinstance(item, dict):
            raise RankerError(f"answer {position} must be an object with id and score")
        raw_id = item.get("id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or str(raw_id).strip() == "":
            raise RankerError(f'answer {position} has no usable "id" (a non-empty string)')
        answer_id = str(raw_id).strip()
        score = item.get("score")
        if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
            raise RankerError(f'answer {position} (id {_short(answer_id)!r}) has no numeric "score"')
        if answer_id in seen:
            raise RankerError(f"answer id {_short(answer_id)!r} is listed twice")
        seen.add(answer_id)
        answers.append((answer_id, float(score)))
    unknown = [a for a, _ in answers if known_ids is not None and a not in known_ids]
    return Ranking(answers=answers, unknown_ids=unknown)


# What a failed connection means, by the words the socket layer uses (httpx passes them on in its message).
_UNREACHABLE = [
    (("connection refused",), "the connection was refused (nothing is listening at that address and port)"),
    (
        ("name or service not known", "nodename nor servname", "name resolution", "no address associated"),
        "the host name is not known",
    ),
    (("no route to host", "network is unreachable", "host is down"), "the network cannot reach that host"),
    (("certificate", "ssl", "tls"), "the secure connection (TLS) could not be set up"),
    (("connection reset", "broken pipe"), "the connection was broken"),
]


def unreachable_reason(exc: httpx.TransportError) -> str:
    """Why a connection failed, in words a person reads (never httpx's class name or an errno):
    "the connection was refused (nothing is listening at that address and port)"."""
    text = str(exc).lower()
    for words, reason in _UNREACHABLE:
        if any(word in text for word in words):
            return reason
    if isinstance(exc, httpx.RemoteProtocolError):
        return "it closed the connection without answering"
    return "the connection failed"


class HttpBackend:
    """Ranks by asking an HTTP service. One instance (one connection pool) is safe to share between threads."""

    def __init__(
        self,
        *,
        config: dict[str, Any],
        known_ids: Container[str] | None = None,
    ) -> None:
        self.url = config["url"]
        self.timeout = float(config.get("timeout", HTTP_DEFAULTS["timeout"]))
        self.retries = int(config.get("retries", HTTP_DEFAULTS["retries"]))
        headers = {"Accept": "application/json", APP_TRAFFIC_HEADER: "app", **config.get("headers", {})}
        if config.get("auth_header"):
            headers["Authorization"] = config["auth_header"]
        self.known_ids = known_ids
        self.client = guarded_client(
            headers=headers,
            timeout=self.timeout,
            limits=httpx.Limits(max_connections=64, max_keepalive_connections=64),
        )

    def close(self) -> None:
        self.client.close()

    def __del__(self) -> None:
        # Callers rarely close a backend; don't leave its pooled connections open until exit.
        client = getattr(self, "client", None)
        if client is not None:
            # At interpreter exit module globals (contextlib, httpx internals) may already be gone,
            # so no helper from a module here: a bare try.
            try:  # noqa: SIM105 - contextlib.suppress may be gone at exit
                client.close()
            except Exception:
                pass

    def _attempt(self, body: dict[str, Any]) -> httpx.Response:
        try:
            response = self.client.post(self.url, json=body)
        except OutboundRefused as exc:
            raise RankerError(f"ranker at {self.url}: {exc}") from None
        except httpx.TimeoutException as exc:
            raise RankerUnavailable(f"ranker at {self.url} did not answer within {self.timeout:g} s") from exc
        except httpx.TransportError as exc:
            raise RankerUnavailable(
                f"ranker at {self.url} cannot be reached: {unreachable_reason(exc)}"
            ) from exc
        if response.status_code >= 500:
            raise RankerUnavailable(f"ranker at {self.url} answered {_status(response)}")
        if 300 <= response.status_code < 400:
            raise RankerError(
                f"ranker at {self.url} answered {_status(response)}; redirects are not followed"
            )
        if response.status_code != 200:
            raise RankerError(f"ranker at {self.url} answered {_status(response)}")
        return response

    def _retrying(self, send: Callable[[], httpx.Response]) -> httpx.Response:
        """``send()``, tried again after a RankerUnavailable ``retries`` times (also by engine rankers).

        The one retry layer (evaluations ask once): the count the final error says is the count made.
        """
        attempts = self.retries + 1
        for attempt in range(1, attempts + 1):
            try:
                return send()
            except RankerUnavailable as exc:
                if attempt == attempts:
                    # Same exception (its kind and details kept), its message saying the attempts made.
                    exc.args = (f"{exc} ({'1 attempt' if attempts == 1 else f'{attempts} attempts'})",)
                    raise
                delay = min(BACKOFF_FIRST * 2 ** (attempt - 1), BACKOFF_MAX)
                time.sleep(delay * random.uniform(0.8, 1.2))  # jitter keeps parallel retries apart
        raise AssertionError("unreachable")

    def rank(self, query: RankQuery, k: int) -> Ranking:
        body = {"question": {"id": query.external_id, "text": query.text}, "rows": k}
        response = self._retrying(lambda: self._attempt(body))
        try:
            payload = response.json()
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise RankerError(f"ranker at {self.url} answered with a body that is not JSON") from exc
        try:
            return parse_ranking(payload, k=k, known_ids=self.known_ids)
        except RankerError as exc:
            raise RankerError(f"ranker at {self.url}: {exc}") from None
