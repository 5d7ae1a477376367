"""The fields every job row has, as abstract models (no table of their own): ``Job`` (evaluation runs,
embeddings builds) and ``WorkerJob`` (trainings, judging runs: run whole by one worker, taken over by
``jobs.claim.stale_jobs_take_over``). A job's ``status`` is its own: the choices differ."""

from __future__ import annotations

from django.db import models


class Job(models.Model):
    """When a job was created, started and finished, and why it failed."""

    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        abstract = True


class WorkerJob(Job):
    """A job one worker claims and runs whole: which worker (Celery node name), its last heartbeat, and
    how many times it was claimed (a job taken over too often fails)."""

    claimed_by = models.CharField(max_length=200, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)

    class Meta:
        abstract = True
