"""Secrets masked whenever a config is shown (the auth header, the request headers' values), and kept when a
shown config comes back edited."""

from __future__ import annotations

import copy
from typing import Any

from django.core.exceptions import ValidationError

MASK = "********"


def redacted_engine_config(config: dict[str, Any]) -> dict[str, Any]:
    """The config as shown: the auth header and request header values masked."""
    shown = copy.deepcopy(config)
    if shown.get("auth_header"):
        shown["auth_header"] = MASK
    request = shown.get("request")
    if isinstance(request, dict) and isinstance(request.get("headers"), dict):
        request["headers"] = {name: MASK for name in request["headers"]}
    return shown


def keep_engine_secrets(new: dict[str, Any], old: dict[str, Any]) -> dict[str, Any]:
    """``new`` with masked secrets (as a shown config carries them) replaced by the stored ones, so
    a config read, edited and sent back keeps its auth header and header values."""
    merged = copy.deepcopy(new)
    if merged.get("auth_header") == MASK:
        if old.get("auth_header"):
            merged["auth_header"] = old["auth_header"]
        else:
            merged.pop("auth_header")
    request = merged.get("request")
    old_headers = (old.get("request") or {}).get("headers") or {}
    if isinstance(request, dict) and isinstance(request.get("headers"), dict):
        for name, value in list(request["headers"].items()):
            if value == MASK:
                if name in old_headers:
                    request["headers"][name] = old_headers[name]
                else:
                    raise ValidationError(
                        {
                            "request.headers": f"request.headers.{name} is masked but no value is stored for it."
                        }
                    )
    return merged
