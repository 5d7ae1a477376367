"""Bounded admission: past capacity, refuse at once (503 + Retry-After) instead of queueing for 30 s.

A server past its capacity can't serve every request; the only choice is which ones wait. Without a bound,
gunicorn queues every connection (in the kernel's listen backlog for sync workers), each request waits for
all those before it, the wait grows without end, clients time out after 30 s while the server still works
through (and saves) what they gave up on. Here the wait is bounded instead: a request that spent more than
``WEB_MAX_QUEUE_MS`` (default 500) queued before the app could start on it is answered ``503`` with
``Retry-After: 1`` at once, before the session, the user or the database are touched, so nothing of it is
stored and answering it costs almost nothing; the queue drains at that speed and the requests behind it
are served with at most that wait.

Why a queue-time check, not a concurrency limit: the app can only count the requests it is already running,
not those still waiting for a worker, and waiting is what has to be bounded. The time a request waited is
known only where it waited: ``config.gunicorn_worker.ThreadWorker`` (gunicorn's threaded worker, set in
``gunicorn.conf.py``) accepts connections as they arrive, so they queue inside the process rather than in
the kernel, and stamps each request when it is handed to the thread pool (``queued``); this middleware,
first in ``MIDDLEWARE``, reads the stamp. A server without the stamp (``runserver``, gunicorn's sync
worker) admits everything, as before. A burst shorter than the bound only waits; the refusals begin once
the server has been behind by more than the bound.

``/healthz`` is always admitted: a health check refused under load would get a busy but healthy container
restarted, which only removes capacity.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse

from config.errors import is_api, json_error

RETRY_AFTER_SECONDS = 1
ALWAYS_ADMITTED = frozenset({"/healthz"})
# Refusals are logged as a count at most this often per process, not one error line each (under overload
# that would be hundreds a second, written by the processes that are short of time).
LOG_EVERY_SECONDS = 10.0

logger = logging.getLogger(__name__)
_stamp = threading.local()
_refused = {"count": 0, "since": time.monotonic()}
_refused_lock = threading.Lock()


@contextmanager
def queued(at: float) -> Iterator[None]:
    """Within this block, the thread's request has been waiting since ``at`` (``time.monotonic()``)."""
    _stamp.at = at
    try:
        yield
    finally:
        _stamp.at = None


def queue_seconds() -> float | None:
    """How long the current request waited before the app started on it; None when nothing stamped it."""
    at = getattr(_stamp, "at", None)
    return None if at is None else time.monotonic() - at


def _note_refusal(waited: float) -> None:
    with _refused_lock:
        _refused["count"] += 1
        now = time.monotonic()
        if now - _refused["since"] < LOG_EVERY_SECONDS:
            return
        count, since = _refused["count"], _refused["since"]
        _refused.update(count=0, since=now)
    logger.warning(
        "Over capacity: refused %d requests in %.0f s (503 + Retry-After; the last had waited %.2f s)",
        count,
        now - since,
        waited,
    )


def overloaded(request: HttpRequest, waited: float) -> HttpResponse:
    """503 with Retry-After, in the shape the caller reads: the API's ``detail``, the rating page's ``error``
    (its script retries a 5xx by itself), or a short page."""
    message = (
        f"The server is busy: this request waited {waited:.1f} s for its turn and was not started, so "
        f"nothing was done. Try again in {RETRY_AFTER_SECONDS} s."
    )
    headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
    if is_api(request):
        return json_error(503, message, headers)
    if request.headers.get("HX-Request") == "true" or "application/json" in request.headers.get("Accept", ""):
        return JsonResponse({"error": message, "field": None}, status=503, headers=headers)
    page = f"<!doctype html><title>Busy</title><h1>The server is busy</h1><p>{message}</p>"
    return HttpResponse(page, status=503, headers=headers)


def _unlogged(response: HttpResponse) -> HttpResponse:
    # Django's handler logs every 5xx as an error; refusals are counted by _note_refusal instead.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


class AdmissionMiddleware:
    """Refuse a request that waited longer than ``WEB_MAX_QUEUE_MS`` before the app got to it."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        waited = queue_seconds()
        limit = settings.WEB_MAX_QUEUE_MS
        if (
            waited is not None
            and limit
            and waited * 1000 > limit
            and request.path_info not in ALWAYS_ADMITTED
        ):
            _note_refusal(waited)
            return _unlogged(overloaded(request, waited))
        return self.get_response(request)
