"""Middleware for errors that happen where no view can handle them.

``ApiErrorsMiddleware``: everything under ``/api/`` answers JSON, also a path the URL resolver
rejects (``/api/rankers/abc/``), a NUL byte in a query parameter (PostgreSQL cannot store or compare
one), and exceptions DRF re-raises (a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE``, JSON nested too
deeply, an unreachable database: see ``api.exceptions.known_error``).

``ErrorPagesMiddleware``: with ``DEBUG=1`` Django answers a 404 with its technical page (every URL
pattern) instead of ``handler404``; this shows the styled 404 page instead, as in production, unless
``DEBUG_TECHNICAL_404=1``.

Both sit last in ``MIDDLEWARE``, so the session, the user and CommonMiddleware's APPEND_SLASH redirect
work as usual around them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse

from api.exceptions import known_error
from config import errors

logger = logging.getLogger("django.request")


def _nul_parameter(request: HttpRequest) -> str | None:
    for key, values in request.GET.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            return key.replace("\x00", "%00")
    return None


def _resolver_404(request: HttpRequest, response: HttpResponse) -> bool:
    """A 404 because no URL pattern matched (Django sets resolver_match only for a match)."""
    return response.status_code == 404 and getattr(request, "resolver_match", None) is None


class ApiErrorsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not errors.is_api(request):
            return self.get_response(request)
        name = _nul_parameter(request)
        if name is not None:
            return errors.json_error(400, f"Query parameter {name!r} contains a NUL character (%00).")
        response = self.get_response(request)
        if _resolver_404(request, response) and response.get("Content-Type", "").startswith("text/html"):
            return errors.json_error(404, "Not found.")
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not errors.is_api(request):
            return None
        if isinstance(exception, Http404):
            return errors.json_error(404, "Not found.")
        has_body = int(request.META.get("CONTENT_LENGTH") or 0) > 0
        known = known_error(exception, has_body=has_body)
        if known is not None:
            return errors.json_error(known.status, known.detail, known.headers)
        # As Django would log it, but the answer stays JSON (also with DEBUG=1).
        logger.error("Internal Server Error: %s", request.path, exc_info=exception)
        return errors.json_error(500, "Server error.")


class ErrorPagesMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    @staticmethod
    def _styled() -> bool:
        # Without DEBUG, Django already renders handler404 (config.errors.page_not_found).
        return settings.DEBUG and not settings.DEBUG_TECHNICAL_404

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if self._styled() and not errors.is_api(request) and _resolver_404(request, response):
            return errors.page_not_found(request)
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if self._styled() and isinstance(exception, Http404) and not errors.is_api(request):
            return errors.page_not_found(request, exception)
        return None
