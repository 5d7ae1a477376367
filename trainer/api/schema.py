"""OpenAPI post-processing: document the error every operation can answer, whatever its view says.

The API's error middleware (``trainer.middleware``) answers ``400 {"detail": ...}`` to any request it
cannot read at all (a NUL character in a query parameter, a body nested too deeply), before a view runs.
"""

from __future__ import annotations

from typing import Any

BAD_REQUEST = {
    "description": "A request that cannot be read (a NUL character in a parameter, JSON nested too deeply).",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}},
}


def add_unreadable_request_responses(
    result: dict[str, Any], generator: Any, request: Any, public: Any
) -> dict:
    """drf-spectacular postprocessing hook: add the 400 to every operation that does not list one."""
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and "responses" in operation:
                operation["responses"].setdefault("400", BAD_REQUEST)
    return result
