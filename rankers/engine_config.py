"""The config of an ``engine`` ranker (a search engine called directly), its presets, and filling its
request template.

::

    {"preset": "elasticsearch" | "opensearch" | "opensearch-hybrid" | "solr" | "custom",
     "url": "https://search.example.com:9200/answers/_search",
     "request": {"method": "POST", "headers": {...}, "params": {...}, "form" or "body": {...}},
     "response": {"hits": "hits.hits", "id": "_id", "score": "_score", "errors": [...]},
     "auth_header": "ApiKey ...", "timeout": 10, "retries": 2}

- ``preset`` fills ``request`` and ``response``; what the config gives key by key (``method``,
  ``headers``, ``params``, ``body``; ``hits``, ``id``, ``score``, ``errors``) replaces the preset's, so a
  preset is a starting point that stays editable. ``custom`` fills nothing but ``method`` (POST) and
  ``errors``.
- ``request.params`` (query-string parameters: text, a number, or a list of texts for a repeated
  parameter), ``request.form`` (the same, sent as an ``application/x-www-form-urlencoded`` body: Solr
  takes its parameters so, which keeps long questions out of the URL) and ``request.body`` (any JSON
  value, sent as ``application/json``; not with ``form``) may hold the
  placeholders ``{{question}}`` (the question's text) and ``{{rows}}`` (how many answers are wanted).
  They are filled **structurally**: in the parsed JSON value and per query parameter, never by pasting
  text into a JSON or URL string, so quotes, backslashes, ``&``, ``#`` or any unicode in a question can't
  break (or inject into) the request. A value that is exactly ``"{{rows}}"`` becomes the number.
  ``url`` and headers take no placeholders.
- ``response`` names where the hits list is (``hits``) and, within each hit, its id and score: dotted
  paths, a whole-number part indexing a list (``error.root_cause.0.reason``). ``errors`` lists where
  the engine puts its error message (Elasticsearch/OpenSearch ``error.root_cause.0.reason``, Solr
  ``error.msg``); the first that holds text is quoted, shortened, in errors.
- ``auth_header`` is sent as ``Authorization`` (``"ApiKey <key>"``, ``"Basic <base64>"``). It and the
  values of ``request.headers`` are secrets: masked whenever a config is shown (``redacted_config``).
  A URL may not carry a user name or password (they would show): use ``auth_header``.
"""

from __future__ import annotations

import copy
import json
import re
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError

from rankers.outbound import OutboundRefused, check_url

ENGINE_DEFAULTS = {"timeout": 10.0, "retries": 2}
# Where Elasticsearch/OpenSearch (root_cause first, the most specific) and Solr put their error message.
ERROR_PATHS = ["error.root_cause.0.reason", "error.reason", "error.msg", "error"]
QUESTION = "{{question}}"
ROWS = "{{rows}}"
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
_PATH = re.compile(r"^[^.\s]+(\.[^.\s]+)*$")
MAX_BODY_CHARS = 20_000
MASK = "********"

_ES_MAPPING = {"hits": "hits.hits", "id": "_id", "score": "_score", "errors": ERROR_PATHS}
PRESETS: dict[str, dict[str, Any]] = {
    # Query DSL on POST <index>/_search; _source off: only ids and scores are needed.
    "elasticsearch": {
        "request": {
            "method": "POST",
            "body": {
                "size": ROWS,
                "_source": False,
                "query": {"multi_match": {"query": QUESTION, "fields": ["title^2", "text"]}},
            },
        },
        "response": _ES_MAPPING,
    },
    "opensearch": {
        "request": {
            "method": "POST",
            "body": {
                "size": ROWS,
                "_source": False,
                "query": {"multi_match": {"query": QUESTION, "fields": ["title^2", "text"]}},
            },
        },
        "response": _ES_MAPPING,
    },
    # Hybrid search: a lexical and a neural query whose scores a search pipeline (normalization
    # processor) combines. Set the pipeline, the embedding field and the model id to yours.
    "opensearch-hybrid": {
        "request": {
            "method": "POST",
            "params": {"search_pipeline": "nlp-search-pipeline"},
            "body": {
                "size": ROWS,
                "_source": {"excludes": ["passage_embedding"]},
                "query": {
                    "hybrid": {
                        "queries": [
                            {"match": {"text": {"query": QUESTION}}},
                            {
                                "neural": {
                                    "passage_embedding": {
                                        "query_text": QUESTION,
                                        "model_id": "your-model-id",
                                        "k": ROWS,
                                    }
                                }
                            },
                        ]
                    }
                },
            },
        },
        "response": _ES_MAPPING,
    },
    # The standard /select handler over title and text, JSON response. The "simple" query parser with
    # only its WHITESPACE operator takes the question as plain words, as multi_match does: with edismax
    # (or the lucene parser) a question is query syntax: "id:184" searched the id field, a leading "-"
    # asked for every answer without that word, "*" and "^" made wildcards and boosts.
    "solr": {
        "request": {
            "method": "GET",
            "params": {
                "q": QUESTION,
                "defType": "simple",
                "q.operators": "WHITESPACE",
                "qf": "title^2 text",
                "rows": ROWS,
                "fl": "id,score",
                "wt": "json",
            },
        },
        "response": {"hits": "response.docs", "id": "id", "score": "score", "errors": ERROR_PATHS},
    },
    "custom": {"request": {"method": "POST"}, "response": {"errors": ERROR_PATHS}},
}
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
# Reranking an engine's (or http ranker's) answers: how many of its top answers a trained version
# reranks, the same at training and ranking (a model learned on one depth ranks another badly), and how
# long ranker_server may spend reranking before it answers the engine's own order instead.
RERANK_DEFAULTS = {"candidates": 50, "budget_ms": 50}


def check_rerank_settings(config: dict[str, Any], errors: dict[str, str], cleaned: dict[str, Any]) -> None:
    """Check ``candidates`` (10–1000) and ``budget_ms`` (1–10000) when given and copy them to ``cleaned``;
    left out, ``rerank_settings`` supplies the defaults."""
    if "candidates" in config:
        candidates = config["candidates"]
        if isinstance(candidates, bool) or not isinstance(candidates, int) or not 10 <= candidates <= 1000:
            errors["candidates"] = "candidates must be a whole number from 10 to 1000."
        else:
            cleaned["candidates"] = candidates
    if "budget_ms" in config:
        budget = config["budget_ms"]
        if isinstance(budget, bool) or not isinstance(budget, int) or not 1 <= budget <= 10_000:
            errors["budget_ms"] = "budget_ms must be a whole number of milliseconds from 1 to 10000."
        else:
            cleaned["budget_ms"] = budget


def rerank_settings(config: dict[str, Any]) -> tuple[int, int]:
    """(candidates, budget_ms) of an engine or http ranker's config, defaults filled in."""
    return (
        int(config.get("candidates", RERANK_DEFAULTS["candidates"])),
        int(config.get("budget_ms", RERANK_DEFAULTS["budget_ms"])),
    )


def preset_config(preset: str) -> dict[str, Any]:
    """The request and response a preset fills in (a copy, to edit)."""
    return copy.deepcopy(PRESETS[preset])


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _placeholders(value: Any, where: str, errors: dict[str, str]) -> set[str]:
    """The placeholders used in a template value; unknown ones, or any in an object key, are errors."""
    found: set[str] = set()
    if isinstance(value, str):
        for name in _PLACEHOLDER.findall(value):
            if name not in {"question", "rows"}:
                errors.setdefault(
                    where, f"{where}: unknown placeholder {{{{{name}}}}}; use {QUESTION} or {ROWS}."
                )
            found.add(name)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found |= _placeholders(item, f"{where}.{i}", errors)
    elif isinstance(value, dict):
        for key, item in value.items():
            if _PLACEHOLDER.search(str(key)):
                errors.setdefault(
                    f"{where}.{key}", f"{where}: placeholders go in values, not in the key {key!r}."
                )
            found |= _placeholders(item, f"{where}.{key}", errors)
    return found


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


def _fill_text(text: str, *, question: str, rows: int) -> str:
    return _PLACEHOLDER.sub(lambda m: question if m.group(1) == "question" else str(rows), text)


def fill_template(value: Any, *, question: str, rows: int) -> Any:
    """``value`` (parsed JSON) with the placeholders of its string values filled: ``"{{rows}}"`` alone
    becomes the number, any other string gets the texts put in. Keys and non-strings are kept as they are;
    the caller serialises the result, so the question is escaped by the JSON encoder, not pasted."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole is not None and whole.group(1) == "rows":
            return rows
        return _fill_text(value, question=question, rows=rows)
    if isinstance(value, list):
        return [fill_template(item, question=question, rows=rows) for item in value]
    if isinstance(value, dict):
        return {key: fill_template(item, question=question, rows=rows) for key, item in value.items()}
    return value


def fill_params(params: dict[str, Any], *, question: str, rows: int) -> list[tuple[str, str]]:
    """The query-string parameters, filled, as (name, value) pairs for the HTTP client to encode one by
    one (a list value repeats its parameter)."""
    pairs: list[tuple[str, str]] = []
    for name, value in params.items():
        for item in value if isinstance(value, list) else [value]:
            pairs.append((name, _fill_text(str(item), question=question, rows=rows)))
    return pairs


def redacted_engine_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config as shown: the auth header and request header values masked."""
    shown = copy.deepcopy(config)
    if shown.get("auth_header"):
        shown["auth_header"] = MASK
    request = shown.get("request")
    if isinstance(request, dict) and isinstance(request.get("headers"), dict):
        request["headers"] = {name: MASK for name in request["headers"]}
    return shown


def keep_engine_secrets(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """``new`` with masked secrets (as a shown config carries them) replaced by the stored ones, so
    a config read, edited and sent back keeps its auth header and header values."""
    merged = copy.deepcopy(new)
    if merged.get("auth_header") == MASK:
        if old.get("auth_header"):
            merged["auth_header"] = old["auth_header"]
        else:
            merged.pop("auth_header")
    request = merged.get("request")
    old_headers = (old.get("request") or {}).get("headers") or {}
    if isinstance(request, dict) and isinstance(request.get("headers"), dict):
        for name, value in list(request["headers"].items()):
            if value == MASK:
                if name in old_headers:
                    request["headers"][name] = old_headers[name]
                else:
                    raise ValidationError(
                        {
                            "request.headers": f"request.headers.{name} is masked but no value is stored for it."
                        }
                    )
    return merged
