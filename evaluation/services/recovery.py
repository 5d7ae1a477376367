"""Recovering from a killed worker: the chunks whose worker is gone taken over (``jobs.rows_take_over``),
runs planned but never queued queued again, finished runs never finalised finalised, and PENDING runs
whose message was lost (``jobs.queued_lost``).
"""

from __future__ import annotations

from datetime import datetime

from django.conf import settings
from django.db.models import F, Q
from django.utils import timezone

from evaluation.models import ChunkStatus, EvaluationChunk, EvaluationRun, RunStatus
from jobs import queued_lost, rows_take_over, stale_since

from .finalise import run_finalise
from .plan import chunks_create


def evaluations_resume(*, worker: str, since: datetime) -> list[int]:
    """Chunk ids to queue again: chunks whose worker is gone. Called when a worker starts, by every
    worker's watchdog (``evaluation.tasks``, every half stale limit) and by beat's sweep.

    Gone means:

    - a chunk this worker node held before ``since`` (its previous process died mid-chunk);
    - a RUNNING chunk of any worker whose heartbeat is older than ``EVALUATION_STALE_SECONDS`` (a worker
      beats every quarter of that while it holds a chunk, ``jobs.heartbeat``, so only a dead or
      cut-off worker falls that far behind);
    - a PENDING chunk queued longer ago than that and claimed by nobody (its message went down with a
      killed worker's prefetch);
    - unfinished chunks of runs this worker planned but never queued (it died while planning).

    Each chunk taken over is set PENDING with a fresh heartbeat by one conditional UPDATE, so two
    workers sweeping at once queue it once, and a queued chunk is not queued again for another limit.
    Runs whose chunks are all done but which were never finalised are finalised here.

    The stall this bounds: a worker SIGKILLed mid-chunk leaves it for at most the stale limit plus one
    watchdog interval (30 s + 15 s by default) whenever any worker is running, beat or not.
    """
    stale = stale_since(settings.EVALUATION_STALE_SECONDS)
    unfinished = EvaluationChunk.objects.filter(run__status=RunStatus.RUNNING).exclude(
        status=ChunkStatus.DONE
    )
    gone = (
        Q(status=ChunkStatus.RUNNING, claimed_by=worker, heartbeat_at__lt=since)
        | Q(heartbeat_at__lt=stale)
        | Q(status=ChunkStatus.PENDING, heartbeat_at__isnull=True, run__started_at__lt=stale)
    )
    ids = set(
        rows_take_over(
            unfinished, gone, status=ChunkStatus.PENDING, claim_token="", heartbeat_at=timezone.now()
        )
    )
    for run_id in EvaluationRun.objects.filter(
        status=RunStatus.RUNNING, claimed_by=worker, started_at__lt=since
    ).values_list("pk", flat=True):
        ids |= set(chunks_create(run_id=run_id))
    for run_id in EvaluationRun.objects.filter(
        status=RunStatus.RUNNING, chunks_total__gt=0, chunks_done__gte=F("chunks_total")
    ).values_list("pk", flat=True):
        run_finalise(run_id=run_id)
    return sorted(ids)


def stale_pending_runs() -> list[int]:
    """PENDING runs whose message was lost (queued more than EVALUATION_STALE_SECONDS ago)."""
    stale = stale_since(settings.EVALUATION_STALE_SECONDS)
    return list(
        queued_lost(EvaluationRun, stale=stale, queued=RunStatus.PENDING).values_list("pk", flat=True)
    )
