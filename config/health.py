"""/healthz: whether the database, the Celery broker and the cache answer now."""

from __future__ import annotations

import logging

from django.core.cache import caches
from django.db import connection
from django.http import HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from jobs.broker import BrokerUnreachable, broker_check

logger = logging.getLogger(__name__)


def database_ok() -> bool:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        return True
    except Exception as exc:  # noqa: BLE001 - any failure means "down" here
        logger.error("healthz: database unreachable: %s", exc)
        return False


def broker_ok() -> bool:
    """Whether a connection to the broker opens now (one try, a few seconds at most)."""
    try:
        broker_check()
        return True
    except BrokerUnreachable as exc:
        logger.warning("healthz: broker unreachable: %s", exc)
        return False


def cache_ok() -> bool:
    """Whether the cache answers (a cache that can't tell, such as the file cache, counts as answering)."""
    reachable = getattr(caches["default"], "reachable", None)
    return True if reachable is None else bool(reachable())


def health_report() -> dict[str, str]:
    checks = {"database": database_ok(), "broker": broker_ok(), "cache": cache_ok()}
    if not checks["database"]:
        status = "down"
    elif all(checks.values()):
        status = "ok"
    else:
        status = "degraded"
    return {"status": status, **{name: "ok" if ok else "down" for name, ok in checks.items()}}


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and what the app depends on, for the load balancer and docker-compose.

    ``{"status": "ok", "database": "ok", "broker": "ok", "cache": "ok"}`` when all answer. Without the
    database nothing works: 503, status "down". Without the broker (Redis) ratings and pages still work
    but no evaluation or training can start: still 200 (keep routing here), status "degraded", and the
    broker (and the cache, when it is the same Redis) "down".
    """
    report = health_report()
    return JsonResponse(report, status=503 if report["database"] != "ok" else 200)
