"""The API throttle holds under concurrent requests: exactly the allowed number get through, the rest 429.

Real threads, each with its own database connection, and the real shared cache (Redis under `make test`).
"""

from __future__ import annotations

import threading

import pytest
from django.core.cache import cache
from django.db import connection
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from api import throttling
from corpus.models import Role
from corpus.services import collection_create
from trainer.services import api_token_create

pytestmark = pytest.mark.django_db(transaction=True)

THREADS = 8
REQUESTS_PER_THREAD = 6
ALLOWED = 10
# A fixed clock: every request at the same instant, so the window holds them all.
NOW = 1_800_000_030.0


@pytest.fixture
def key(make_user, monkeypatch) -> str:
    monkeypatch.setattr(
        SimpleRateThrottle, "THROTTLE_RATES", {"anon": "100000/min", "user": f"{ALLOWED}/min"}
    )
    monkeypatch.setattr(throttling.SlidingWindowThrottle, "timer", staticmethod(lambda: NOW))
    collection = collection_create(name="Busy", slug="busy")
    user = make_user("ann", collection=collection, role=Role.RATER)
    cache.delete(throttling.SlidingWindowThrottle.storage_key(f"throttle_user_{user.pk}"))
    return api_token_create(collection=collection, user=user, role=Role.RATER)[1]


def get_together(key: str) -> list[tuple[int, str | None]]:
    barrier = threading.Barrier(THREADS)
    results: list[tuple[int, str | None]] = []
    lock = threading.Lock()

    def run() -> None:
        try:
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
            barrier.wait()
            for _ in range(REQUESTS_PER_THREAD):
                response = client.get("/api/collections/busy/")
                with lock:
                    results.append((response.status_code, response.headers.get("Retry-After")))
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_api_throttle_concurrent_requests_exactly_allowed_rest_429_with_retry_after(key):
    results = get_together(key)

    assert len(results) == THREADS * REQUESTS_PER_THREAD == 48
    assert sum(status == 200 for status, _ in results) == ALLOWED
    # Every counted request was at NOW: the first leaves the window 60 s later.
    assert sorted({(status, retry) for status, retry in results if status != 200}) == [(429, "60")]


def test_api_throttle_embedded_file_cache_concurrent_requests_exactly_allowed(
    settings, tmp_path, make_user, monkeypatch
):
    """The embedded mode's file cache has no atomic increment: the count is taken under a process lock."""
    settings.CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
            "LOCATION": str(tmp_path / "cache"),
        }
    }
    monkeypatch.setattr(
        SimpleRateThrottle, "THROTTLE_RATES", {"anon": "100000/min", "user": f"{ALLOWED}/min"}
    )
    monkeypatch.setattr(throttling.SlidingWindowThrottle, "timer", staticmethod(lambda: NOW))
    collection = collection_create(name="Busy", slug="busy")
    user = make_user("ann", collection=collection, role=Role.RATER)
    key = api_token_create(collection=collection, user=user, role=Role.RATER)[1]

    results = get_together(key)

    assert sum(status == 200 for status, _ in results) == ALLOWED
    assert sorted({(status, retry) for status, retry in results if status != 200}) == [(429, "60")]
