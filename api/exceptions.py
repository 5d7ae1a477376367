"""API errors are JSON: ``{"detail": "..."}``, or one list of messages per field for bad input.

Besides DRF's own exceptions this maps the services' Django ``ValidationError`` (bad input, 400) and
``EvaluationUnavailable`` (the task queue is down, 503), so no service error becomes a 500, and
``known_error`` maps what no view can prevent: a body over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (413), a
JSON body nested deeper than Python's recursion limit (400), a transaction aborted by conflicting
writers (``RatingsBusy`` after its retries, or a deadlock or serialization failure: 503 with
``Retry-After: 1``) and an unreachable database (503 with ``Retry-After: 10``). ``config.middleware.ApiErrorsMiddleware`` uses ``known_error`` too, for what
happens outside DRF.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import InterfaceError, OperationalError
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from evaluation.services import EvaluationUnavailable
from ratings.services import RatingsBusy, is_retryable

logger = logging.getLogger(__name__)

# Seconds a client should wait before retrying after a 503 for an unreachable database.
DATABASE_RETRY_AFTER = 10
# ... and after a 503 for a transaction aborted by conflicting writers (deadlock, serialization failure).
CONFLICT_RETRY_AFTER = 1


@dataclass(frozen=True)
class KnownError:
    status: int
    detail: str
    headers: dict[str, str] = field(default_factory=dict)


def known_error(exc: BaseException, *, has_body: bool) -> KnownError | None:
    """The JSON error for an exception no view handles itself, or None (a real server error)."""
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        return KnownError(413, f"Request body too large: the limit is {limit} bytes.")
    if isinstance(exc, TooManyFieldsSent | TooManyFilesSent):
        return KnownError(400, str(exc))
    if isinstance(exc, RecursionError) and has_body:
        return KnownError(400, "JSON parse error: the request body is nested too deeply.")
    if isinstance(exc, RatingsBusy):
        return KnownError(503, str(exc), {"Retry-After": str(CONFLICT_RETRY_AFTER)})
    if is_retryable(exc):
        logger.warning("Transaction aborted by conflicting writers: %s", exc)
        return KnownError(
            503,
            "The request conflicted with others saving the same data; nothing was changed. Try again.",
            {"Retry-After": str(CONFLICT_RETRY_AFTER)},
        )
    if isinstance(exc, OperationalError | InterfaceError):
        logger.error("Database unavailable: %s", exc)
        return KnownError(
            503,
            "The database is unavailable; nothing was changed. Try again shortly.",
            {"Retry-After": str(DATABASE_RETRY_AFTER)},
        )
    return None


def exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        exc = ValidationError(detail=detail)
    if isinstance(exc, EvaluationUnavailable):
        return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    request = context.get("request")
    has_body = request is not None and int(request.META.get("CONTENT_LENGTH") or 0) > 0
    known = known_error(exc, has_body=has_body)
    if known is not None:
        return Response({"detail": known.detail}, status=known.status, headers=known.headers)
    return drf_exception_handler(exc, context)
