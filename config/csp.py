"""Content-Security-Policy on every response when ``DEBUG=0`` (Django 5.2 has none built in).

The app's own pages load scripts, styles, images and fonts only from the app (``'self'``): no inline
``<script>``, no inline event handlers, no ``style`` attributes, no ``eval`` (htmx is configured with
``allowEval: false`` and without its injected indicator ``<style>``, see ``templates/base.html``). Data
for scripts travels in ``json_script`` blocks (``type="application/json"``), which CSP does not run.

The API docs (Swagger UI, ReDoc) are third-party UIs that inject ``<style>`` elements as they render,
so their two views add ``'unsafe-inline'`` to ``style-src`` (and ReDoc a ``blob:`` worker for its search)
(``csp_docs``); their scripts are static files like every other page's.

With ``DEBUG=1`` no policy is sent: Django's technical error pages are inline HTML, CSS and JS.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse

POLICY = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self' data:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}
# ReDoc runs its search in a Worker made from a blob: URL. Its attribution logo (cdn.redoc.ly) stays
# refused by img-src, as intended: the docs load nothing from outside the app.
DOCS = {**POLICY, "style-src": "'self' 'unsafe-inline'", "worker-src": "'self' blob:"}


def header_value(policy: dict[str, str]) -> str:
    return "; ".join(f"{directive} {sources}" for directive, sources in policy.items())


def csp_docs(view: Callable) -> Callable:
    """Mark a view whose page is a third-party UI that injects ``<style>`` elements (the API docs)."""

    @wraps(view)
    def wrapped(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        response.csp_policy = DOCS  # type: ignore[attr-defined]
        return response

    return wrapped


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not settings.DEBUG and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = header_value(getattr(response, "csp_policy", POLICY))
        return response
