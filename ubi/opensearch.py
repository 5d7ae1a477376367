"""Reading a user's OpenSearch UBI indexes (``ubi_queries``, ``ubi_events``: what the User Behavior Insights
plugin writes) page by page with the scroll API; the index mappings the plugin creates, for tests and for
a team that writes the indexes itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx

PAGE = 1000
SCROLL = "2m"

# As the plugin (opensearch-project/user-behavior-insights, src/main/resources) creates them; events also
# index the spec's query_id, session_id and user_id, which the plugin leaves to dynamic mapping.
QUERIES_MAPPING: dict[str, Any] = {
    "dynamic": False,
    "properties": {
        "timestamp": {"type": "date"},
        "query_id": {"type": "keyword", "ignore_above": 100},
        "query": {"type": "text"},
        "query_response_id": {"type": "keyword", "ignore_above": 100},
        "query_response_hit_ids": {"type": "keyword"},
        "user_query": {"type": "text", "fields": {"keyword": {"type": "keyword", "ignore_above": 256}}},
        "query_attributes": {"type": "flat_object"},
        "client_id": {"type": "keyword", "ignore_above": 100},
        "indexes": {"type": "keyword"},
    },
}
EVENTS_MAPPING: dict[str, Any] = {
    "properties": {
        "application": {"type": "keyword", "ignore_above": 256},
        "action_name": {"type": "keyword", "ignore_above": 100},
        "query_id": {"type": "keyword", "ignore_above": 100},
        "session_id": {"type": "keyword", "ignore_above": 100},
        "client_id": {"type": "keyword", "ignore_above": 100},
        "user_id": {"type": "keyword", "ignore_above": 100},
        "message": {"type": "keyword", "ignore_above": 1024},
        "message_type": {"type": "keyword", "ignore_above": 100},
        "timestamp": {"type": "date", "format": "rfc3339_lenient||epoch_millis", "ignore_malformed": True},
        "event_attributes": {
            "dynamic": True,
            "properties": {
                "position": {"properties": {"ordinal": {"type": "integer"}}},
                "object": {
                    "properties": {
                        "object_id": {"type": "keyword", "ignore_above": 256},
                        "object_id_field": {"type": "keyword", "ignore_above": 100},
                    }
                },
            },
        },
    }
}


class OpenSearchError(Exception):
    pass


def _json(response: httpx.Response, what: str) -> dict[str, Any]:
    if response.status_code != 200:
        raise OpenSearchError(f"{what}: HTTP {response.status_code}: {response.text[:300]}")
    try:
        return response.json()
    except ValueError:
        raise OpenSearchError(f"{what}: the answer is not JSON") from None


def index_documents(
    url: str, index: str, *, headers: dict[str, str] | None = None, timeout: float = 30
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every document of ``index`` as (``_id``, ``_source``), a page of PAGE at a time. OpenSearchError
    when the node can't be reached or answers an error (an index that does not exist: 404)."""
    base = url.rstrip("/")
    try:
        with httpx.Client(headers=headers or {}, timeout=timeout) as client:
            page = _json(
                client.post(
                    f"{base}/{index}/_search",
                    params={"scroll": SCROLL},
                    json={"size": PAGE, "sort": ["_doc"]},
                ),
                f"searching {index}",
            )
            scroll_id = page.get("_scroll_id")
            try:
                while hits := page["hits"]["hits"]:
                    for hit in hits:
                        yield hit["_id"], hit.get("_source") or {}
                    page = _json(
                        client.post(
                            f"{base}/_search/scroll", json={"scroll": SCROLL, "scroll_id": scroll_id}
                        ),
                        f"reading {index}",
                    )
                    scroll_id = page.get("_scroll_id", scroll_id)
            finally:
                if scroll_id:
                    client.request("DELETE", f"{base}/_search/scroll", json={"scroll_id": scroll_id})
    except httpx.HTTPError as exc:
        raise OpenSearchError(f"OpenSearch at {base} cannot be reached: {exc}") from exc
