"""The Redis cache backend, tolerant of Redis being down: the cache is not a dependency.

Everything the app caches (the rating queue's candidate tables, the dashboard's change figures, the API
throttle's counters) can be computed again or done without. So when Redis can't be reached, a read is
a miss (the default), and a write, an ``add`` or a delete does nothing; ``incr`` still raises (a counter
can't be faked; the throttle then lets the request through). A failure is logged at most once a minute
per process, and short socket timeouts (``OPTIONS`` in settings) keep a hung Redis from holding pages.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from django.core.cache.backends.base import DEFAULT_TIMEOUT
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# What "Redis can't be reached" raises: redis-py's errors (ConnectionError, TimeoutError, ...) and OS ones.
UNREACHABLE = (RedisError, OSError)
LOG_EVERY_SECONDS = 60.0

_last_logged = 0.0


def _unreachable(operation: str, exc: BaseException) -> None:
    global _last_logged
    now = time.monotonic()
    if now - _last_logged >= LOG_EVERY_SECONDS:
        _last_logged = now
        logger.warning(
            "Cache unreachable (%s skipped; further failures quiet for a minute): %s", operation, exc
        )


class TolerantRedisCache(RedisCache):
    """``RedisCache`` whose reads miss and whose writes do nothing while Redis is unreachable."""

    def reachable(self) -> bool:
        """Whether Redis answers a PING now (for /healthz)."""
        try:
            return bool(self._cache.get_client(write=True).ping())
        except UNREACHABLE:
            return False

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        try:
            return super().get(key, default, version)
        except UNREACHABLE as exc:
            _unreachable("get", exc)
            return default

    def get_many(self, keys: Any, version: int | None = None) -> dict:
        try:
            return super().get_many(keys, version)
        except UNREACHABLE as exc:
            _unreachable("get_many", exc)
            return {}

    def has_key(self, key: Any, version: int | None = None) -> bool:
        try:
            return super().has_key(key, version)
        except UNREACHABLE as exc:
            _unreachable("has_key", exc)
            return False

    def set(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> None:
        try:
            super().set(key, value, timeout, version)
        except UNREACHABLE as exc:
            _unreachable("set", exc)

    def set_many(self, data: dict, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> list:
        try:
            return super().set_many(data, timeout, version)
        except UNREACHABLE as exc:
            _unreachable("set_many", exc)
            return list(data)

    def add(self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        try:
            return super().add(key, value, timeout, version)
        except UNREACHABLE as exc:
            _unreachable("add", exc)
            return False

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        try:
            return super().touch(key, timeout, version)
        except UNREACHABLE as exc:
            _unreachable("touch", exc)
            return False

    def delete(self, key: Any, version: int | None = None) -> bool:
        try:
            return super().delete(key, version)
        except UNREACHABLE as exc:
            _unreachable("delete", exc)
            return False

    def delete_many(self, keys: Any, version: int | None = None) -> None:
        try:
            super().delete_many(keys, version)
        except UNREACHABLE as exc:
            _unreachable("delete_many", exc)

    def clear(self) -> None:
        try:
            super().clear()
        except UNREACHABLE as exc:
            _unreachable("clear", exc)
