"""The error responses the API's views document, once: their bodies (``{"detail": ...}``, or messages per
field) and the codes every authenticated endpoint can give, for ``extend_schema(responses=...)``."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse
from rest_framework import serializers


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in words.")


class ValidationErrorSerializer(serializers.Serializer):
    """``{"field": ["message", ...]}``; for a list body, ``{"<item index>": {"field": [...]}}``."""

    non_field_errors = serializers.ListField(child=serializers.CharField(), required=False)


# Response codes every authenticated endpoint can give, documented once.
AUTH_ERRORS = {
    401: OpenApiResponse(ErrorSerializer, description="No credentials, or a wrong or revoked token."),
    429: OpenApiResponse(
        ErrorSerializer, description="Too many requests; retry after the Retry-After header."
    ),
}
NOT_FOUND = {
    404: OpenApiResponse(ErrorSerializer, description="No such object that you can see, or no such page.")
}
FORBIDDEN = {403: OpenApiResponse(ErrorSerializer, description="Your role (or the token's) is not enough.")}
INVALID = {400: OpenApiResponse(ValidationErrorSerializer, description="Bad input: messages per field.")}
BUSY = {
    503: OpenApiResponse(
        ErrorSerializer,
        description="Other writes of the same pairs kept conflicting; nothing was stored. "
        "Retry after the Retry-After header.",
    )
}
UNAVAILABLE = {
    503: OpenApiResponse(ErrorSerializer, description="The task queue is unreachable; nothing was stored.")
}
