"""API errors are JSON: ``{"detail": "..."}``, or one list of messages per field for bad input.

Besides DRF's own exceptions this maps the services' Django ``ValidationError`` (bad input, 400) and
``EvaluationUnavailable`` (the task queue is down, 503), so no service error becomes a 500.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from evaluation.services import EvaluationUnavailable


def exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"non_field_errors": exc.messages}
        exc = ValidationError(detail=detail)
    if isinstance(exc, EvaluationUnavailable):
        return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
    return drf_exception_handler(exc, context)
