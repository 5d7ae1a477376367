"""What a Ranker's ``config`` JSON may hold, per kind, and checking it.

builtin
    ``candidates`` (whole number 10–1000, default 100): how many BM25 candidates the model reranks.
http
    ``url`` (required, http:// or https://): where the trainer POSTs questions. Its host must pass the
    outbound policy (``rankers/outbound.py``): an address literal is checked here, a host name each time
    it is connected to.
    ``headers`` (object of header name to text): sent with every request.
    ``auth_header`` (text): sent as the ``Authorization`` header, e.g. ``"Bearer s3cret"``.
    ``timeout`` (seconds, above 0 and at most 120, default 10): per attempt.
    ``retries`` (whole number 0–5, default 2): extra attempts after a timeout, refused connection or 5xx.
    ``candidates`` (whole number 10–1000, default 50): how many of its top answers a trained version
    reranks; ``budget_ms`` (1–10000, default 50): how long ``ranker_server`` may rerank before it
    answers the service's own order (both also for engine rankers).
engine
    a search engine called directly (Elasticsearch, OpenSearch, Solr): see ``rankers/engine_config/``.

Unknown keys are refused, so a typo ("timout") is an error rather than silently ignored.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from rankers.engine_config import check_rerank_settings, redacted_engine_config, validate_engine_config
from rankers.models import RankerKind
from rankers.outbound import OutboundRefused, check_url

HTTP_DEFAULTS = {"timeout": 10.0, "retries": 2}
BUILTIN_DEFAULTS = {"candidates": 100}
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
SECRET_KEYS = ("auth_header", "headers")


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def validate_ranker_config(*, kind: str, config: Any) -> dict[str, Any]:
    """The config with defaults filled in, or ValidationError with one message per config key."""
    if not isinstance(config, dict):
        raise ValidationError({"config": "Config must be a JSON object."})
    if kind == RankerKind.ENGINE:
        return validate_engine_config(config)
    errors: dict[str, str] = {}
    if kind == RankerKind.BUILTIN:
        allowed = set(BUILTIN_DEFAULTS)
        candidates = config.get("candidates", BUILTIN_DEFAULTS["candidates"])
        if not _whole(candidates) or not 10 <= candidates <= 1000:
            errors["candidates"] = "candidates must be a whole number from 10 to 1000."
        cleaned: dict[str, Any] = {"candidates": candidates}
    elif kind == RankerKind.HTTP:
        allowed = {"url", "headers", "auth_header", "timeout", "retries", "candidates", "budget_ms"}
        url = config.get("url")
        if not isinstance(url, str) or not url.strip():
            errors["url"] = "url is required: the address the trainer POSTs questions to."
        else:
            parts = urlsplit(url.strip())
            try:
                parts.port  # noqa: B018 - raises ValueError for a bad port
                bad_port = False
            except ValueError:
                bad_port = True
            if parts.scheme not in {"http", "https"} or not parts.hostname or bad_port or len(url) > 2000:
                errors["url"] = f"url must be an http:// or https:// address with a host, not {url[:200]!r}."
            else:
                try:
                    check_url(url.strip())
                except OutboundRefused as exc:
                    errors["url"] = f"url {url[:200]!r} is {exc}."
        headers = config.get("headers", {})
        if not isinstance(headers, dict) or not all(
            isinstance(name, str)
            and _HEADER_NAME.match(name)
            and isinstance(value, str)
            and "\n" not in value
            for name, value in headers.items()
        ):
            errors["headers"] = "headers must be an object of header names to text values."
        auth_header = config.get("auth_header", "")
        if not isinstance(auth_header, str) or "\n" in auth_header or "\r" in auth_header:
            errors["auth_header"] = "auth_header must be one line of text, e.g. 'Bearer <token>'."
        timeout = config.get("timeout", HTTP_DEFAULTS["timeout"])
        if not _number(timeout) or not 0 < timeout <= 120:
            errors["timeout"] = "timeout must be a number of seconds above 0 and at most 120."
        retries = config.get("retries", HTTP_DEFAULTS["retries"])
        if not _whole(retries) or not 0 <= retries <= 5:
            errors["retries"] = "retries must be a whole number from 0 to 5."
        cleaned = {
            "url": url.strip() if isinstance(url, str) else url,
            "timeout": timeout,
            "retries": retries,
        }
        if headers:
            cleaned["headers"] = headers
        if auth_header:
            cleaned["auth_header"] = auth_header
        check_rerank_settings(config, errors, cleaned)
    else:
        raise ValidationError({"kind": f"kind must be one of {', '.join(RankerKind.values)}, not {kind!r}."})
    for key in sorted(set(config) - allowed):
        errors[key] = f"unknown setting {key!r} for a {kind} ranker (allowed: {', '.join(sorted(allowed))})."
    if errors:
        raise ValidationError(errors)
    return cleaned


def redacted_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config as shown to API clients and pages: secrets (auth header, header values) masked."""
    if "request" in config:  # an engine ranker's
        return redacted_engine_config(config)
    shown = dict(config)
    if shown.get("auth_header"):
        shown["auth_header"] = "********"
    if isinstance(shown.get("headers"), dict):
        shown["headers"] = {name: "********" for name in shown["headers"]}
    return shown
