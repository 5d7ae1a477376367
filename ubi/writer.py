"""The spool's writer: a process of its own (forked by ``ranker_server`` once loaded: no second start-up;
``manage.py ubi_writer`` when it must be started again) that
drains the spool into the database every 0.2 s, so the serving process's interpreter (its GIL) never
builds rows or waits on the database: its share of logging is one ``write`` per request.

It retries a failed batch with a back-off of up to 5 s (the database down: the spool grows), holds no
database connection while idle, says how it is doing in ``writer-<owner>.json`` beside the spool (what
``GET /ubi/stats`` shows), and exits once its owner has: after a last pass, which stores the owner's
file whole and removes it.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
from collections.abc import Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

from django.db import connection

from ubi.services import ubi_spooled_store
from ubi.spool import Drainer

logger = logging.getLogger(__name__)

INTERVAL = 0.2
MAX_BACKOFF = 5.0


def status_path(directory: Path, owner: int) -> Path:
    return directory / f"writer-{owner}.json"


def _alive(owner: int) -> bool:
    """Whether the owner still runs: the writer is its child, and a child whose parent exits is adopted."""
    return owner == os.getpid() or os.getppid() == owner


def _store(records: list[dict[str, Any]]) -> None:
    ubi_spooled_store(records=records)


def writer_run(
    *, directory: Path, owner: int, stop: threading.Event, store: Callable[[list[dict]], None] = _store
) -> int:
    """Drain until ``stop`` is set or ``owner`` has exited, then a last pass; the records stored."""
    directory.mkdir(parents=True, exist_ok=True)
    drainer = Drainer(directory, owner=owner)
    status = status_path(directory, owner)
    stored, error, delay = 0, "", INTERVAL
    last_status: dict[str, Any] = {}

    def one_pass() -> bool:
        nonlocal stored, error
        try:
            count = drainer.drain(store)
        except Exception as exc:  # the database down or refusing: the lines stay in the spool
            error = (str(exc).strip().splitlines() or [repr(exc)])[0][:300]
            logger.warning("ubi writer: cannot store (%s); kept in the spool, retrying", error)
            with suppress(Exception):
                connection.close()
            return False
        stored += count
        error = ""
        if not count:
            connection.close()  # idle: no database session held
        return True

    while not stop.is_set() and _alive(owner):
        delay = INTERVAL if one_pass() else min(max(delay * 2, 0.5), MAX_BACKOFF)
        now = {"stored": stored, "database_error": error or None}
        if now != last_status:
            status.write_text(json.dumps(now))
            last_status = now
        stop.wait(delay)
    for _ in range(3):  # the owner's file, now unlocked, whole
        if one_pass():
            break
        stop.wait(1.0)
    drainer.close()
    with suppress(FileNotFoundError):
        status.unlink()
    connection.close()
    return stored


def writer_status(directory: Path, owner: int) -> dict[str, Any]:
    try:
        return json.loads(status_path(directory, owner).read_text())
    except (FileNotFoundError, ValueError):
        return {"stored": 0, "database_error": None}


def writer_fork(directory: Path, owner: int) -> int:
    """Fork the writer from the serving process (its database connections closed, no request served
    yet): the child runs ``writer_run`` and exits; the parent gets its pid."""
    pid = os.fork()
    if pid:
        return pid
    code = 0
    try:
        # Background work: on a busy machine the serving process's requests go first.
        os.nice(10)
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the group: the owner says when
        writer_run(directory=directory, owner=owner, stop=stop)
    except BaseException:
        logger.exception("ubi writer failed")
        code = 1
    finally:
        os._exit(code)
