"""The rating queue's persisted state: each collection's candidate table (``raters.next_task.pool``), built
by a background job (``raters.next_task.refresh``) and read by every rater's request."""

from __future__ import annotations

from django.db import models

from corpus.models import Collection
from jobs.models import WorkerJob


class TableStatus(models.TextChoices):
    READY = "ready", "Ready"
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    FAILED = "failed", "Failed"


class CandidateTable(WorkerJob):
    """One collection's candidate table and the job that refreshes it.

    ``parts`` is the collection state the served table was built for (``pool.table_state``: what decides
    the rankings, the questions, the latest evaluation), ``wanted`` the latest state a request saw; they
    differ while a refresh is queued or running, and the previous table serves meanwhile. ``table``:
    {question id: pooled answer ids}; ``run_top``: {question id: [answer ids of the latest evaluation's top
    k, its NDCG@k]} for ``run_id``; ``version`` is one higher at each save, so a process keeps the table
    it read until it changes."""

    collection = models.OneToOneField(Collection, on_delete=models.CASCADE, related_name="candidate_table")
    status = models.CharField(max_length=20, choices=TableStatus.choices, default=TableStatus.QUEUED)
    parts = models.JSONField(default=dict, blank=True)
    wanted = models.JSONField(default=dict, blank=True)
    # One higher each time a request asks for a newer state: the job lets go only when none came meanwhile.
    asked = models.PositiveIntegerField(default=0)
    source = models.CharField(max_length=20, blank=True)
    reachable = models.BooleanField(default=True)
    built_at = models.DateTimeField(null=True, blank=True)
    version = models.PositiveIntegerField(default=0)
    table = models.JSONField(default=dict, blank=True)
    run_id = models.BigIntegerField(null=True, blank=True)
    run_top = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"candidate table of {self.collection_id} ({self.status}, v{self.version})"
