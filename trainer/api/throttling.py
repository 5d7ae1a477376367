"""API throttling that holds under concurrent requests: one atomic counter per caller per window.

DRF's ``SimpleRateThrottle`` keeps each caller's request times as a list in the cache and writes it
back after every request (read, append, write). Concurrent requests of one caller read the same list
and the last write wins, so requests go uncounted: 6,355 ratings got through in 60 s under a
6,000/minute rate. Here each caller has one integer per fixed window (the rate's period, aligned to the
clock: a minute's window is …:00 to …:60), created with ``cache.add`` and counted with ``cache.incr``,
which Redis does atomically (INCR); the request is allowed while the count is at most the rate. A
throttled request gets ``Retry-After`` = the seconds left in the window.

For the cache backends whose ``incr`` is a read and a write (the file cache of the embedded mode, which
runs one web process), the count is taken under a process-wide lock.

The cache is not a dependency: when it can't be reached, requests are allowed (and logged).
"""

from __future__ import annotations

import logging
import threading
import time

from django.core.cache import BaseCache, caches
from django.core.cache.backends.redis import RedisCache
from rest_framework import throttling

logger = logging.getLogger(__name__)

_local_lock = threading.Lock()


class WindowRateThrottle(throttling.SimpleRateThrottle):
    """``SimpleRateThrottle``'s rates and scopes, counted by an atomic counter per fixed window."""

    timer = staticmethod(time.time)

    @staticmethod
    def key_for(base_key: str, now: float, duration: int) -> str:
        """The counter of ``base_key`` (``throttle_<scope>_<ident>``) in the window holding ``now``."""
        return f"{base_key}:window:{int(now // duration)}"

    def allow_request(self, request, view) -> bool:
        if self.rate is None:
            return True
        base_key = self.get_cache_key(request, view)
        if base_key is None:
            return True
        now = self.timer()
        window = int(now // self.duration)
        self.retry_after = (window + 1) * self.duration - now
        key = self.key_for(base_key, now, self.duration)
        try:
            count = self._count(key)
        except Exception as exc:  # noqa: BLE001 - any cache failure: the cache is not a dependency
            logger.warning("Throttle cache unreachable, request allowed: %s", exc)
            return True
        return count <= self.num_requests

    def _count(self, key: str) -> int:
        """Add one to the window's counter and return it (the counter outlives its window by a second)."""
        cache = caches["default"]  # the backend itself (DRF's ``self.cache`` is a proxy of it)
        if isinstance(cache, RedisCache):
            return self._increment(cache, key)
        with _local_lock:
            return self._increment(cache, key)

    def _increment(self, cache: BaseCache, key: str) -> int:
        for _ in range(3):
            cache.add(key, 0, timeout=self.duration + 1)
            try:
                return cache.incr(key)
            except ValueError:  # expired between add and incr: add it again
                continue
        raise RuntimeError(f"throttle counter {key} keeps expiring")

    def wait(self) -> float:
        return self.retry_after


class UserRateThrottle(WindowRateThrottle, throttling.UserRateThrottle):
    """Per signed-in user (a token acts as its user): ``API_THROTTLE_USER``."""


class AnonRateThrottle(WindowRateThrottle, throttling.AnonRateThrottle):
    """Per client address, for requests without credentials: ``API_THROTTLE_ANON``."""
