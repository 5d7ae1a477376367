"""Keeping a job row's heartbeat fresh while a worker holds it, on a timer rather than on progress, and
taking over the rows whose worker is gone (``stale_jobs_take_over``).

A job (an evaluation chunk, a training) is taken over by another worker when its heartbeat is older
than its stale limit. Progress alone is a poor heartbeat: a slow ranker (10 s timeout, retried) or a
long cross-validation reports nothing for minutes, so the limit would have to be long, and a killed
worker's job would wait that long. A beat on a timer, every quarter of the limit, lets the limit be
short (30 s) without ever taking over a job whose worker is alive.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timedelta

from django.db import close_old_connections, connection, models
from django.db.models import Q
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


def stale_jobs_take_over(
    model: type[models.Model],
    *,
    stale_seconds: float,
    max_attempts: int,
    give_up: str,
    requeue: Mapping[str, object],
    worker: str = "",
    since: datetime | None = None,
) -> list[int]:
    """Take over a job table's rows whose worker is gone; return the ids to queue again.

    For job rows with ``status`` (queued/running/failed), ``claimed_by``, ``started_at``,
    ``heartbeat_at``, ``attempts``, ``created_at`` and ``finished_at`` (trainings, judging runs).
    Gone means: the heartbeat is older than ``stale_seconds``, or (on a worker's start) the row was
    claimed by this worker's node name before this process started. A gone row goes back to queued
    (with ``requeue``'s field values), or to failed with ``give_up`` after ``max_attempts`` claims, so
    none stays running forever. A queued row nobody claimed for that long (its message lost) is queued
    again.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=stale_seconds)
    gone = Q(heartbeat_at__lt=stale)
    if worker and since is not None:
        gone |= Q(claimed_by=worker, started_at__lt=since)
    rows = model._default_manager
    running = rows.filter(gone, status="running")
    rows.filter(pk__in=running.filter(attempts__gte=max_attempts).values("pk")).update(
        status="failed", finished_at=now, error=give_up
    )
    ids = list(running.filter(attempts__lt=max_attempts).values_list("pk", flat=True))
    rows.filter(pk__in=ids, status="running").update(status="queued", claimed_by="", **requeue)
    lost = rows.filter(status="queued", created_at__lt=stale).exclude(pk__in=ids)
    return ids + list(lost.values_list("pk", flat=True))
