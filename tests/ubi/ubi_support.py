"""Helpers of the UBI tests: a ranker_server with its own spool directory, and awaiting rows it writes."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from tests.servers import RankerServer, start_manage_server

T = TypeVar("T")
AWAIT_SECONDS = 20


def start_logging_server(slug: str, log_dir: Path, spool: Path, *args: str, **env: str) -> RankerServer:
    """``manage.py ranker_server`` for the collection, its UBI spool in ``spool``."""
    return start_manage_server(
        "ranker_server",
        slug,
        log_dir,
        *args,
        server=RankerServer,
        path="/",
        env={"UBI_SPOOL_DIR": str(spool), **env},
    )


def await_value(read: Callable[[], T], done: Callable[[T], bool], what: str) -> T:
    """``read()`` once ``done`` holds for it (the writer thread stores in batches every 0.2 s)."""
    deadline = time.monotonic() + AWAIT_SECONDS
    while True:
        value = read()
        if done(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: still {value!r} after {AWAIT_SECONDS} s")
        time.sleep(0.05)
