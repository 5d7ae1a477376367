"""Error pages: 403, 404 and 500 in the site's layout with a way back; JSON under /api/.

Django calls these as ``handler403``/``handler404``/``handler500``/``handler400`` (``config/urls.py``).
With ``DEBUG=1`` Django shows its technical 404 page instead of ``handler404``;
``config.middleware.ErrorPagesMiddleware`` puts the styled page back unless ``DEBUG_TECHNICAL_404=1``.
"""

from __future__ import annotations

import logging

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.template import loader
from django.utils.http import url_has_allowed_host_and_scheme

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"


def is_api(request: HttpRequest) -> bool:
    return request.path_info.startswith(API_PREFIX)


def json_error(status: int, detail: str, headers: dict[str, str] | None = None) -> JsonResponse:
    """The API's error body, ``{"detail": "..."}``, as DRF's exception handler writes it."""
    return JsonResponse({"detail": detail}, status=status, headers=headers)


def _back(request: HttpRequest) -> str:
    """The page the user came from, if it is one of ours (never an outside site) and not this one."""
    referer = request.META.get("HTTP_REFERER", "")
    if not referer or referer.endswith(request.get_full_path()):
        return ""
    if url_has_allowed_host_and_scheme(referer, allowed_hosts={request.get_host()}, require_https=False):
        return referer
    return ""


def page_not_found(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api(request):
        return json_error(404, "Not found.")
    context = {"request_path": request.path, "back": _back(request)}
    return render(request, "404.html", context, status=404)


def permission_denied(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api(request):
        return json_error(403, "You do not have permission to perform this action.")
    # Our PermissionDenied messages are written for the user ("Only trainers of this collection ...").
    message = str(exception) if exception is not None and str(exception) else ""
    return render(request, "403.html", {"message": message, "back": _back(request)}, status=403)


def bad_request(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    if is_api(request):
        return json_error(400, "Bad request.")
    return HttpResponse(b"<h1>Bad Request (400)</h1>", status=400)


def server_error(request: HttpRequest) -> HttpResponse:
    """The 500 page, rendered without the request's context: the database (sessions, the user) may be
    what failed. If even that fails, a plain page."""
    if is_api(request):
        return json_error(500, "Server error.")
    try:
        body = loader.get_template("500.html").render({})
    except Exception:
        logger.exception("The 500 page could not be rendered")
        body = "<!doctype html><title>Server error</title><h1>Server error</h1><p><a href='/'>Home</a></p>"
    return HttpResponse(body, status=500)
