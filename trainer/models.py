"""What only the API needs: service credentials."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from corpus.models import Collection, Role
from jobs.models import WorkerJob


def _hash_token(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiToken(models.Model):
    """A service credential scoped to one collection and a role. Only a hash of the key is stored."""

    name = models.CharField(max_length=200)
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="api_tokens")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.RATER)
    # The user the token acts as (ratings it posts are recorded under this user).
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    key_prefix = models.CharField(max_length=8)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    # None: never expires (only when asked for at creation).
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked = models.BooleanField(default=False)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(role__in=Role.values), name="api_token_role_valid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…, {self.role} of {self.collection})"

    @property
    def is_expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()

    @staticmethod
    def generate_key() -> str:
        return secrets.token_hex(20)

    @staticmethod
    def hash_key(key: str) -> str:
        return _hash_token(key)


class TrainingStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class TrainingPhase(models.TextChoices):
    """The steps of a training, in order; progress runs 0–1 across them."""

    QUEUED = "queued", "Waiting for a worker"
    COLLECT_LABELS = "collect-labels", "Collecting labels"
    COMPUTE_FEATURES = "compute-features", "Computing features"
    CROSS_VALIDATE = "cross-validate", "Cross-validating candidates"
    FIT = "fit", "Fitting the chosen model"
    EVALUATE = "evaluate", "Evaluating on the test questions"
    DECIDE = "decide", "Deciding on promotion"
    DONE = "done", "Done"


ACTIVE_TRAINING = (TrainingStatus.QUEUED, TrainingStatus.RUNNING)


class Training(WorkerJob):
    """One training of a ranker: a job row claimed by one worker, with phase and progress."""

    # From jobs.models.WorkerJob: created_at, started_at, finished_at, error, claimed_by, heartbeat_at,
    # attempts.
    ranker = models.ForeignKey("rankers.Ranker", on_delete=models.CASCADE, related_name="trainings")
    status = models.CharField(max_length=10, choices=TrainingStatus.choices, default=TrainingStatus.QUEUED)
    phase = models.CharField(max_length=20, choices=TrainingPhase.choices, default=TrainingPhase.QUEUED)
    progress = models.FloatField(default=0.0)
    trigger = models.CharField(max_length=10, default="ui")  # ui, api, command, auto
    version = models.ForeignKey(
        "rankers.RankerVersion", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # What the promotion policy decided: "promoted", "kept" or "manual" (a trainer decides).
    decision = models.CharField(max_length=10, blank=True)
    decision_reason = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["ranker"],
                condition=Q(status__in=ACTIVE_TRAINING),
                name="training_one_active_per_ranker",
            ),
            models.CheckConstraint(
                condition=Q(status__in=TrainingStatus.values), name="training_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(progress__gte=0, progress__lte=1), name="training_progress_0_1"
            ),
        ]

    def __str__(self) -> str:
        return f"training {self.pk} of ranker {self.ranker_id} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_TRAINING
