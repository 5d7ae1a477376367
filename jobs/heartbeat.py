"""Keeping a job row's heartbeat fresh while a worker holds it, on a timer rather than on progress.

A job (an evaluation chunk, a training) is taken over by another worker when its heartbeat is older
than its stale limit (``jobs.claim``). Progress alone is a poor heartbeat: a slow ranker (10 s timeout,
retried) or a long cross-validation reports nothing for minutes, so the limit would have to be long, and
a killed worker's job would wait that long. A beat on a timer, every quarter of the limit, lets the limit
be short (30 s) without ever taking over a job whose worker is alive.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from django.db import close_old_connections, connection
from django.db.models import QuerySet
from django.utils import timezone


def beat_interval(stale_seconds: float) -> float:
    """Seconds between beats: four per stale limit, so three can be late before a job counts as gone."""
    return max(stale_seconds / 4, 0.1)


@contextmanager
def heartbeat(beat: Callable[[], object], *, stale_seconds: float) -> Iterator[None]:
    """Call ``beat`` (an UPDATE of the job's ``heartbeat_at``) every ``beat_interval`` seconds in a
    thread of its own until the block ends. A failing beat (database briefly unreachable) is skipped:
    the next one tries again, and the job is only taken over if beats fail for the whole limit."""
    stop = threading.Event()

    def run() -> None:
        try:
            while not stop.wait(beat_interval(stale_seconds)):
                try:
                    beat()
                except Exception:  # noqa: BLE001 - a missed beat is harmless; the next one retries
                    close_old_connections()
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=run, name="job-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def heartbeat_rows(rows: QuerySet, *, stale_seconds: float) -> AbstractContextManager[None]:
    """``heartbeat`` whose beat sets ``heartbeat_at`` of ``rows`` to now: the job's row, filtered so
    that it matches only while this worker still holds it."""
    return heartbeat(lambda: rows.update(heartbeat_at=timezone.now()), stale_seconds=stale_seconds)
