"""Bodies that are one object or a list of them (questions, answers, ratings): the list read and checked
item by item, all or nothing, and what an upsert of them answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from api.schema import ONE_OR_LIST_MARK

MAX_BULK = 10_000

# The body is one object or a list of them: api.schema turns the list schema into a oneOf.
ONE_OR_LIST = {ONE_OR_LIST_MARK: MAX_BULK}


class UpsertSummarySerializer(serializers.Serializer):
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()


def _items(data: Any, what: str) -> list:
    """A request body that is one object or a list of them, as a list (400 otherwise)."""
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        if not data:
            raise ValidationError({"non_field_errors": [f"Send at least one {what}."]})
        if len(data) > MAX_BULK:
            raise ValidationError({"non_field_errors": [f"Send at most {MAX_BULK} {what}s per request."]})
        return data
    raise ValidationError({"non_field_errors": [f"Send a {what} object or a list of them."]})


def validated_items(serializer_class, data: Any, what: str, *, unique: Callable[[dict], Any]) -> list[dict]:
    """Validate each item; errors are keyed by item index. Repeated keys (``unique``) are errors too."""
    items = _items(data, what)
    serializer = serializer_class(data=items, many=True)
    if not serializer.is_valid():
        errors = serializer.errors
        # DRF reports a list body's errors as a list, or (newer versions) a dict keyed by item index.
        pairs = errors.items() if isinstance(errors, dict) else enumerate(errors)
        raise ValidationError({str(i): error for i, error in pairs if error})
    seen: dict[Any, int] = {}
    errors = {}
    for i, item in enumerate(serializer.validated_data):
        key = unique(item)
        if key in seen:
            errors[str(i)] = {"id": [f"{what} {key!r} appears twice (also item {seen[key]})."]}
        seen.setdefault(key, i)
    if errors:
        raise ValidationError(errors)
    return serializer.validated_data
