"""The chat client's own rate limit (no network needed)."""

import time

from judges.client import RateLimiter, completions_url


def test_rate_limiter_spreads_requests_evenly():
    limiter = RateLimiter(per_minute=600)  # one start every 0.1 s

    started = time.monotonic()
    for _ in range(4):
        limiter.wait()
    elapsed = time.monotonic() - started

    # Four starts need three intervals at least (a lower bound: a limit, not a speed).
    assert elapsed >= 0.3


def test_rate_limiter_zero_means_no_limit():
    limiter = RateLimiter(per_minute=0)
    limiter.wait()
    assert limiter.interval == 0.0


def test_completions_url_appends_the_path_once():
    assert completions_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
