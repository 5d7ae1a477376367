"""API throttling that holds under concurrent requests: at most N requests in any period (sliding window).

DRF's ``SimpleRateThrottle`` keeps each caller's request times as a list in the cache and writes it
back after every request (read, append, write). Concurrent requests of one caller read the same list
and the last write wins, so requests go uncounted: 6,355 ratings got through in 60 s under a
6,000/minute rate. Here the same sliding window (a request is allowed when fewer than N of the caller's
requests were allowed in the last period) is kept atomically:

- **Redis**: the caller's request times are a sorted set, and one Lua script drops the expired ones,
  counts, and adds the new one if there is room. Redis runs a script as one step, so concurrent requests
  (from any number of processes) are counted exactly.
- **other caches** (the file cache of the embedded mode, which runs one web process; the local-memory
  cache): DRF's list, read and written under a process-wide lock.

A sliding window, not a fixed one: a fixed window aligned to the clock would let 2N requests through in
one period (N just before the boundary, N just after). A refused request is not counted, and gets
``Retry-After`` = the seconds until its oldest counted request leaves the window.

The cache is not a dependency: when it can't be reached, requests are allowed (and logged).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import uuid
from typing import Any

from django.core.cache import BaseCache, caches
from django.core.cache.backends.redis import RedisCache
from rest_framework import throttling
from rest_framework.exceptions import Throttled

from api import token_budget

logger = logging.getLogger(__name__)

_local_lock = threading.Lock()

# KEYS[1]: the caller's sorted set of request times. ARGV: now, period (s), limit, a unique member.
# Returns {1, 0} when allowed (and counted), {0, seconds to wait} when refused.
# With KEYS[2], the address's invalid-token count (``token_budget``), and ARGV[5], its budget: {-1, 0}
# (nothing counted) when the count has reached the budget.
_SLIDING_WINDOW = """
if KEYS[2] and (tonumber(redis.call('GET', KEYS[2])) or 0) >= tonumber(ARGV[5]) then
    return {-1, '0'}
end
local now, period, limit = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - period)
if redis.call('ZCARD', KEYS[1]) < limit then
    redis.call('ZADD', KEYS[1], now, ARGV[4])
    redis.call('EXPIRE', KEYS[1], math.ceil(period) + 1)
    return {1, '0'}
end
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
return {0, tostring(tonumber(oldest[2]) + period - now)}
"""


@functools.lru_cache(maxsize=4)
def _sliding_window_script(backend: Any) -> Any:
    """The script bound to a client of the cache's primary (every write goes there), made once per cache
    backend: a new redis-py client and script object per request cost about as much CPU as the call.
    (redis-py clients are thread-safe; each call takes a connection from the backend's pool.)"""
    return backend.get_client(write=True).register_script(_SLIDING_WINDOW)


class SlidingWindowThrottle(throttling.SimpleRateThrottle):
    """``SimpleRateThrottle``'s rates, scopes and sliding window, counted atomically."""

    timer = staticmethod(time.time)

    @staticmethod
    def storage_key(cache_key: str) -> str:
        """Where a caller's window is kept (not DRF's key: a list left there by DRF's throttle, or a sorted
        set here, would be the wrong type for the other)."""
        return f"{cache_key}:sliding"

    # Whether this throttle checks a valid token's invalid-token budget left pending by authentication
    # (``token_budget``), in the same cache round trip as its own window.
    carries_token_budget = False

    def allow_request(self, request, view) -> bool:
        budget_key = token_budget.take_pending(request) if self.carries_token_budget else None
        cache_key = self.get_cache_key(request, view) if self.rate is not None else None
        if cache_key is None:
            if budget_key is not None:
                token_budget.check(budget_key)
            return True
        key = self.storage_key(cache_key)
        now = self.timer()
        try:
            allowed, self.retry_after = self._take(key, now, budget_key)
        except Throttled:
            raise
        except Exception as exc:  # noqa: BLE001 - any cache failure: the cache is not a dependency
            logger.warning("Throttle cache unreachable, request allowed: %s", exc)
            return True
        return allowed

    def _take(self, key: str, now: float, budget_key: str | None = None) -> tuple[bool, float]:
        """Count a request at ``now`` if the window has room: (allowed, seconds to wait when refused).
        With ``budget_key``, first the invalid-token budget: its 429 when spent (nothing counted)."""
        cache = caches["default"]  # the backend itself (DRF's ``self.cache`` is a proxy of it)
        if isinstance(cache, RedisCache):
            return self._take_redis(cache, key, now, budget_key)
        with _local_lock:
            if budget_key is not None:
                token_budget.check(budget_key)
            return self._take_local(cache, key, now)

    def _take_redis(
        self, cache: RedisCache, key: str, now: float, budget_key: str | None
    ) -> tuple[bool, float]:
        full_key = cache.make_and_validate_key(key)
        script = _sliding_window_script(cache._cache)
        keys, args = [full_key], [repr(now), self.duration, self.num_requests, uuid.uuid4().hex]
        if budget_key is not None:
            keys.append(cache.make_and_validate_key(budget_key))
            args.append(token_budget.limit())
        allowed, wait = script(keys=keys, args=args)
        if int(allowed) == -1:
            raise token_budget.refusal()
        return bool(int(allowed)), float(wait)

    def _take_local(self, cache: BaseCache, key: str, now: float) -> tuple[bool, float]:
        history = [t for t in cache.get(key, []) if t > now - self.duration]
        if len(history) >= self.num_requests:
            return False, min(history) + self.duration - now
        history.append(now)
        cache.set(key, history, self.duration)
        return True, 0.0

    def wait(self) -> float:
        return self.retry_after


class UserRateThrottle(SlidingWindowThrottle, throttling.UserRateThrottle):
    """Per signed-in user (a token acts as its user): ``API_THROTTLE_USER``."""

    carries_token_budget = True


class AnonRateThrottle(SlidingWindowThrottle, throttling.AnonRateThrottle):
    """Per client address, for requests without credentials: ``API_THROTTLE_ANON``."""
