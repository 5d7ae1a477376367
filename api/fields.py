"""Input checks several resources' serializers share: no NUL character, an external id."""

from __future__ import annotations

from rest_framework import serializers


def no_nul_characters(value, where: str = "") -> None:
    """PostgreSQL cannot store the NUL character in text or JSON; refuse it with the place it was found."""
    if isinstance(value, str):
        if "\x00" in value:
            raise serializers.ValidationError(f"Text may not contain the NUL character{where}.")
    elif isinstance(value, dict):
        for key, item in value.items():
            no_nul_characters(key, where)
            no_nul_characters(item, f" (in {key!r})")
    elif isinstance(value, list):
        for item in value:
            no_nul_characters(item, where)


def external_id_field(**kwargs):
    return serializers.CharField(max_length=200, trim_whitespace=True, **kwargs)
