"""Checking an engine ranker's config: the preset and defaults filled in, or a ValidationError naming each
wrong field (``url``, ``request.body``, ``response.id``, ...)."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from rankers.engine_config.presets import ERROR_PATHS, PRESETS, preset_config
from rankers.engine_config.rerank import check_rerank_settings
from rankers.engine_config.templates import QUESTION, _placeholders
from rankers.outbound import OutboundRefused, check_url

ENGINE_DEFAULTS = {"timeout": 10.0, "retries": 2}
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_PATH = re.compile(r"^[^.\s]+(\.[^.\s]+)*$")
MAX_BODY_CHARS = 20_000

REQUEST_KEYS = ("method", "headers", "params", "form", "body")
RESPONSE_KEYS = ("hits", "id", "score", "errors")
ALLOWED = {
    "preset",
    "url",
    "request",
    "response",
    "auth_header",
    "timeout",
    "retries",
    "candidates",
    "budget_ms",
}


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _check_url(url: Any, errors: dict[str, str]) -> str:
    if not isinstance(url, str) or not url.strip():
        errors["url"] = "url is required: the engine's search endpoint, e.g. https://host:9200/index/_search."
        return ""
    url = url.strip()
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - raises ValueError for a bad port
        bad_port = False
    except ValueError:
        bad_port = True
    if parts.username is not None or parts.password is not None:
        # Not quoted back: the URL holds a credential.
        errors["url"] = 'url must not carry a user name or password; put them in auth_header ("Basic ...").'
    elif parts.scheme not in {"http", "https"} or not parts.hostname or bad_port or len(url) > 2000:
        errors["url"] = f"url must be an http:// or https:// address with a host, not {url[:200]!r}."
    elif parts.fragment:
        errors["url"] = "url must not have a #fragment; query parameters go in request.params."
    else:
        try:
            check_url(url)
        except OutboundRefused as exc:
            errors["url"] = f"url {url[:200]!r} is {exc}."
    return url


def _check_request(request: dict[str, Any], errors: dict[str, str]) -> dict[str, Any]:
    cleaned: dict[str, Any] = {}
    method = request.get("method", "POST")
    if method not in {"GET", "POST"}:
        errors["request.method"] = f"request.method must be GET or POST, not {str(method)[:20]!r}."
    cleaned["method"] = method
    headers = request.get("headers", {})
    if not isinstance(headers, dict) or not all(
        isinstance(name, str)
        and _HEADER_NAME.match(name)
        and isinstance(value, str)
        and "\n" not in value
        and "\r" not in value
        for name, value in headers.items()
    ):
        errors["request.headers"] = (
            "request.headers must be an object of header names to one-line text values."
        )
    elif headers:
        cleaned["headers"] = headers
    used: set[str] = set()
    for key in ("params", "form"):
        pairs = request.get(key, {})
        if not isinstance(pairs, dict) or not all(
            isinstance(name, str)
            and name
            and (
                isinstance(value, str)
                or _number(value)
                or isinstance(value, list)
                and all(isinstance(v, str) or _number(v) for v in value)
            )
            for name, value in pairs.items()
        ):
            errors[f"request.{key}"] = (
                f"request.{key} must be an object of parameter names to text, a number or a list of texts."
            )
            pairs = {}
        elif pairs:
            cleaned[key] = pairs
        used |= _placeholders(pairs, f"request.{key}", errors)
    if "form" in request and "body" in request:
        errors["request.form"] = "request has both a form and a JSON body: give one of them."
    if "body" in request:
        body = request["body"]
        if len(json.dumps(body)) > MAX_BODY_CHARS:
            errors["request.body"] = f"request.body is over {MAX_BODY_CHARS:,} characters as JSON."
        cleaned["body"] = body
        used |= _placeholders(body, "request.body", errors)
    if "question" not in used and not any(k.startswith("request.") for k in errors):
        errors["request"] = (
            f"request has no {QUESTION} placeholder in request.params, request.form or request.body: "
            "the engine would get the same query for every question."
        )
    for key in sorted(set(request) - set(REQUEST_KEYS)):
        errors[f"request.{key}"] = f"unknown request setting {key!r} (allowed: {', '.join(REQUEST_KEYS)})."
    return cleaned


def _check_response(response: dict[str, Any], errors: dict[str, str]) -> dict[str, Any]:
    cleaned: dict[str, Any] = {}
    for key, example in (("hits", "hits.hits"), ("id", "_id"), ("score", "_score")):
        path = response.get(key)
        if not isinstance(path, str) or not _PATH.match(path.strip()):
            errors[f"response.{key}"] = (
                f"response.{key} must be a dotted path in the engine's JSON, e.g. {example!r}."
            )
        else:
            cleaned[key] = path.strip()
    paths = response.get("errors", ERROR_PATHS)
    if not isinstance(paths, list) or not all(isinstance(p, str) and _PATH.match(p) for p in paths):
        errors["response.errors"] = "response.errors must be a list of dotted paths, e.g. ['error.msg']."
    else:
        cleaned["errors"] = paths
    for key in sorted(set(response) - set(RESPONSE_KEYS)):
        errors[f"response.{key}"] = f"unknown response setting {key!r} (allowed: {', '.join(RESPONSE_KEYS)})."
    return cleaned


def validate_engine_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config with the preset and defaults filled in, or ValidationError naming each wrong field
    (``url``, ``request.body``, ``response.id``, ...)."""
    errors: dict[str, str] = {}
    preset = config.get("preset", "custom")
    if preset not in PRESETS:
        errors["preset"] = f"preset must be one of {', '.join(PRESETS)}, not {str(preset)[:40]!r}."
        preset = "custom"
    filled = preset_config(preset)
    for key in ("request", "response"):
        given = config.get(key, {})
        if not isinstance(given, dict):
            errors[key] = f"{key} must be a JSON object."
            given = {}
        filled[key].update(given)
    cleaned: dict[str, Any] = {
        "preset": preset,
        "url": _check_url(config.get("url"), errors),
        "request": _check_request(filled["request"], errors),
        "response": _check_response(filled["response"], errors),
    }
    auth_header = config.get("auth_header", "")
    if not isinstance(auth_header, str) or "\n" in auth_header or "\r" in auth_header:
        errors["auth_header"] = (
            "auth_header must be one line of text, e.g. 'ApiKey <key>' or 'Basic <base64>'."
        )
    elif auth_header:
        cleaned["auth_header"] = auth_header
    timeout = config.get("timeout", ENGINE_DEFAULTS["timeout"])
    if not _number(timeout) or not 0 < timeout <= 120:
        errors["timeout"] = "timeout must be a number of seconds above 0 and at most 120."
    retries = config.get("retries", ENGINE_DEFAULTS["retries"])
    if not isinstance(retries, int) or isinstance(retries, bool) or not 0 <= retries <= 5:
        errors["retries"] = "retries must be a whole number from 0 to 5."
    cleaned["timeout"], cleaned["retries"] = timeout, retries
    check_rerank_settings(config, errors, cleaned)
    for key in sorted(set(config) - ALLOWED):
        errors[key] = f"unknown setting {key!r} for an engine ranker (allowed: {', '.join(sorted(ALLOWED))})."
    if errors:
        raise ValidationError(errors)
    return cleaned
