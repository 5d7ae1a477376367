"""Background jobs' shared lifecycle (evaluation runs, trainings, judging runs, embeddings builds, the
rating queue's candidate tables): each
job keeps only what is its own. One subject per module:

* :mod:`.broker` – whether the Celery broker can be reached now (``broker_check``; ``/healthz`` too).
* :mod:`.queue` – queuing a job: ``JobUnavailable`` (each job's ``*Unavailable`` subclasses it),
  ``broker_require`` before anything is stored, ``enqueue_after_commit`` to send its task by name.
* :mod:`.claim` – QUEUED → RUNNING by one conditional UPDATE (``job_claim``), and taking over the rows
  whose worker is gone (``stale_jobs_take_over``, ``rows_take_over``, ``queued_lost``, ``stale_since``; on a worker's start,
  ``resume_on_start``).
* :mod:`.heartbeat` – a held job's heartbeat, on a timer (``heartbeat``, ``heartbeat_rows``).
* :mod:`.changes` – a collection's state changed (``collection_state_announce``, after the commit), so
  the derived state kept of it (the rating queue's candidate table) is refreshed without waiting.
* :mod:`.reasons` – a job's failure in words for a person (``failure_reason``: no class name, no errno).
* :mod:`.models` – the job rows' common fields, as abstract models (``Job``, ``WorkerJob``); imported
  from there, by the apps' models.
"""

from jobs.broker import BrokerUnreachable, broker_check
from jobs.changes import collection_state_announce, collection_state_changed
from jobs.claim import (
    FAILED,
    QUEUED,
    RUNNING,
    job_claim,
    queued_lost,
    resume_on_start,
    rows_take_over,
    stale_jobs_take_over,
    stale_since,
)
from jobs.heartbeat import beat_interval, heartbeat, heartbeat_rows
from jobs.queue import JobUnavailable, broker_require, enqueue_after_commit
from jobs.reasons import failure_reason

__all__ = [
    "FAILED",
    "QUEUED",
    "RUNNING",
    "BrokerUnreachable",
    "JobUnavailable",
    "beat_interval",
    "broker_check",
    "collection_state_announce",
    "collection_state_changed",
    "broker_require",
    "enqueue_after_commit",
    "failure_reason",
    "heartbeat",
    "heartbeat_rows",
    "job_claim",
    "queued_lost",
    "resume_on_start",
    "rows_take_over",
    "stale_jobs_take_over",
    "stale_since",
]
