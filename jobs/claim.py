"""Claiming a job row (one conditional UPDATE, so of two workers given the same job one wins) and
taking over the rows whose worker is gone (its heartbeat older than the job's stale limit).

Every job's status is queued (an evaluation run says pending), running, then finished its own way.
A worker takes over jobs three ways: when it starts, those its killed predecessor (same node name) left
(``resume_on_start``); every half stale limit, in its watchdog, and every minute in beat's sweep, those
whose heartbeat went stale (``stale_jobs_take_over``, ``rows_take_over``) or whose message was lost
(``queued_lost``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from django.db import close_old_connections, models
from django.db.models import F, Q, QuerySet
from django.utils import timezone

QUEUED, RUNNING, FAILED = "queued", "running", "failed"


def stale_since(stale_seconds: float) -> datetime:
    """The moment before which a heartbeat (or a queued job's creation) counts as stale."""
    return timezone.now() - timedelta(seconds=stale_seconds)


def job_claim(
    model: type[models.Model], *, pk: int, worker: str = "", queued: str = QUEUED, **values
) -> bool:
    """QUEUED → RUNNING by one conditional UPDATE: of two workers given the same job, one wins.

    Sets ``started_at`` to now and, where the model has them, ``heartbeat_at`` to now, ``claimed_by`` to
    ``worker`` and ``attempts`` one higher, with ``values`` (the job's own fields, e.g. its phase).
    ``queued``: the job's waiting status, when it is not "queued".
    """
    now = timezone.now()
    fields = {field.name for field in model._meta.concrete_fields}
    claim: dict[str, object] = {"status": RUNNING, "started_at": now}
    if "heartbeat_at" in fields:
        claim["heartbeat_at"] = now
    if "claimed_by" in fields:
        claim["claimed_by"] = worker
    if "attempts" in fields:
        claim["attempts"] = F("attempts") + 1
    return bool(model._default_manager.filter(pk=pk, status=queued).update(**claim, **values))


def queued_lost(model: type[models.Model], *, stale: datetime, queued: str = QUEUED) -> QuerySet:
    """Rows queued before ``stale`` that no worker claimed: their message was lost (with a killed
    worker's prefetch, say), so they must be queued again."""
    return model._default_manager.filter(status=queued, created_at__lt=stale)


def rows_take_over(rows: QuerySet, gone: Q, **values) -> list[int]:
    """Ids of the ``rows`` matching ``gone`` that this call took over: each set to ``values`` by an
    UPDATE that still requires ``gone``, so two workers sweeping at once take a row once."""
    return [
        pk
        for pk in rows.filter(gone).values_list("pk", flat=True)
        if rows.filter(gone, pk=pk).update(**values)
    ]


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

    For job rows with ``status`` (queued/running/failed) and ``jobs.models.WorkerJob``'s fields
    (trainings, judging runs). Gone means: the heartbeat is older than ``stale_seconds``, or (on a
    worker's start) the row was claimed by this worker's node name before this process started. A gone
    row goes back to queued (with ``requeue``'s field values), or to failed with ``give_up`` after
    ``max_attempts`` claims, so none stays running forever. A queued row nobody claimed for that long
    (its message lost) is queued again.
    """
    now = timezone.now()
    stale = now - timedelta(seconds=stale_seconds)
    gone = Q(heartbeat_at__lt=stale)
    if worker and since is not None:
        gone |= Q(claimed_by=worker, started_at__lt=since)
    rows = model._default_manager
    running = rows.filter(gone, status=RUNNING)
    rows.filter(pk__in=running.filter(attempts__gte=max_attempts).values("pk")).update(
        status=FAILED, finished_at=now, error=give_up
    )
    ids = list(running.filter(attempts__lt=max_attempts).values_list("pk", flat=True))
    rows.filter(pk__in=ids, status=RUNNING).update(status=QUEUED, claimed_by="", **requeue)
    lost = queued_lost(model, stale=stale).exclude(pk__in=ids)
    return ids + list(lost.values_list("pk", flat=True))


def resume_on_start(
    sender: object,
    *,
    resume: Callable[[str], Sequence[int]],
    enqueue: Callable[[list], None],
    logger: logging.Logger,
    resumed: str,
    failed: str,
) -> None:
    """What a worker does for one kind of job when it starts (Celery's ``worker_ready``): ``resume`` the
    jobs its node name (``sender.hostname``) held before, ``enqueue`` their ids, and log ``resumed`` (with
    their count and the node name) on the job's ``logger``.

    A worker must start even when the database is briefly unreachable: an error is logged as ``failed``
    and beat's sweep and the watchdog retry.
    """
    hostname = getattr(sender, "hostname", "") or ""
    try:
        close_old_connections()
        ids = list(resume(hostname))
        enqueue(ids)
        if ids:
            logger.info(resumed, len(ids), hostname)
    except Exception:
        logger.exception(failed)
    finally:
        close_old_connections()
