"""Evaluation runs: a ranker's results on every test question, scored with NDCG@k and accuracy@k."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from corpus.models import Collection, Discount, GainScheme, Question
from jobs.models import Job
from rankers.models import Ranker, RankerVersion


class RunStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class RunTrigger(models.TextChoices):
    UI = "ui", "Web UI"
    API = "api", "API"
    TRAINING = "training", "After training"
    SCHEDULE = "schedule", "Schedule"
    VERSION = "version", "New version announced"


class Verdict(models.TextChoices):
    """The paired randomization test's reading of a run against the previous one (p < 0.05), as
    ``evaluation.metrics.stats.verdict`` says it."""

    REAL_IMPROVEMENT = "real improvement", "Real improvement"
    WITHIN_NOISE = "within noise", "Within noise"
    REAL_DROP = "real drop", "Real drop"


class EvaluationRunQuerySet(models.QuerySet["EvaluationRun"]):
    def succeeded(self) -> EvaluationRunQuerySet:
        """The runs that finished with results: the only ones with figures to show, chart or compare."""
        return self.filter(status=RunStatus.SUCCEEDED)


class EvaluationRun(Job):
    # From jobs.models.Job: created_at, started_at, finished_at, error.
    ranker = models.ForeignKey(Ranker, on_delete=models.CASCADE, related_name="evaluation_runs")
    ranker_version = models.ForeignKey(
        RankerVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="evaluation_runs"
    )
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="evaluation_runs")
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.PENDING)
    trigger = models.CharField(max_length=10, choices=RunTrigger.choices, default=RunTrigger.UI)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True)

    # The metric definition, snapshotted from the collection when the run is created.
    ndcg_k = models.PositiveSmallIntegerField()
    gain_scheme = models.CharField(max_length=20, choices=GainScheme.choices)
    discount = models.CharField(max_length=30, choices=Discount.choices)
    relevance_threshold = models.PositiveSmallIntegerField()
    accuracy_k = models.PositiveSmallIntegerField()

    # Progress.
    questions_total = models.PositiveIntegerField(default=0)
    questions_done = models.PositiveIntegerField(default=0)
    questions_failed = models.PositiveIntegerField(default=0)
    # The first error a question met, in the order they happened (the run's error quotes it too).
    first_error = models.TextField(blank=True)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    # Celery node name of the worker that planned the run; a restart of that node resumes it.
    claimed_by = models.CharField(max_length=200, blank=True)

    # Results (filled when the run succeeds).
    label_count = models.PositiveIntegerField(
        null=True, blank=True, help_text="Labels known when the run ran."
    )
    ndcg_mean = models.FloatField(null=True, blank=True)
    ndcg_ci_low = models.FloatField(null=True, blank=True)
    ndcg_ci_high = models.FloatField(null=True, blank=True)
    accuracy_mean = models.FloatField(null=True, blank=True)
    judged_mean = models.FloatField(null=True, blank=True)
    unlabelled_in_top_k = models.PositiveIntegerField(null=True, blank=True)
    no_good_answer_count = models.PositiveIntegerField(null=True, blank=True)
    # Questions whose NDCG counts toward the mean (a known relevant answer, ranker answered).
    scored_count = models.PositiveIntegerField(null=True, blank=True)
    # The previous run's rankings re-scored with this run's labels as NDCG@k on rated answers (every
    # comparison's measure), and the questions both runs scored.
    previous_ndcg_mean = models.FloatField(null=True, blank=True)
    comparison_count = models.PositiveIntegerField(null=True, blank=True)

    # Paired comparison with the previous successful run of the same ranker, in NDCG@k on rated answers.
    previous_run = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    delta = models.FloatField(null=True, blank=True)
    delta_ci_low = models.FloatField(null=True, blank=True)
    delta_ci_high = models.FloatField(null=True, blank=True)
    p_value = models.FloatField(null=True, blank=True)
    # Empty until compared (a first run, a failed run, no question both runs answered).
    verdict = models.CharField(max_length=20, choices=Verdict.choices, blank=True)

    objects = EvaluationRunQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=RunStatus.values), name="evaluation_run_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(questions_done__lte=models.F("questions_total")),
                name="evaluation_run_progress_bounded",
            ),
        ]
        indexes = [
            models.Index(fields=["ranker", "status", "-created_at"], name="evaluation_run_history"),
            models.Index(fields=["collection", "status", "-created_at"], name="evaluation_run_collection"),
        ]

    def __str__(self) -> str:
        return f"Run {self.pk} of {self.ranker} ({self.status})"

    @property
    def progress_percent(self) -> int:
        if not self.questions_total:
            return 0
        return round(100 * self.questions_done / self.questions_total)

    @property
    def what_text(self) -> str:
        """What the run evaluates, in words: "Service v2" (the ranker, and its version when known)."""
        version = self.ranker_version.label if self.ranker_version_id and self.ranker_version else ""
        return f"{self.ranker.name} {version}".strip()

    @property
    def since_text(self) -> str:
        """When the run started (queued, while PENDING) in local time: "13:02" today, else with the date."""
        moment = timezone.localtime(self.started_at or self.created_at)
        if moment.date() == timezone.localdate():
            return f"{moment:%H:%M}"
        return f"{moment:%Y-%m-%d %H:%M}"

    @property
    def questions_not_attempted(self) -> int:
        """Test questions never asked because the run stopped early (0 while it runs or when it finished all)."""
        if not self.is_finished:
            return 0
        return max(self.questions_total - self.questions_done, 0)

    @property
    def is_finished(self) -> bool:
        return self.status in {RunStatus.SUCCEEDED, RunStatus.FAILED}


class ChunkStatus(models.TextChoices):
    PENDING = "pending", "Pending"
    RUNNING = "running", "Running"
    DONE = "done", "Done"


class EvaluationChunk(models.Model):
    """A slice of a run's test questions, evaluated by one Celery task; claimed with a conditional UPDATE."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    question_ids = models.JSONField(default=list)
    status = models.CharField(max_length=10, choices=ChunkStatus.choices, default=ChunkStatus.PENDING)
    claimed_by = models.CharField(max_length=200, blank=True)
    # Celery task id of the claim: a redelivered message (same id) may continue its own chunk.
    claim_token = models.CharField(max_length=200, blank=True)
    # Renewed while the chunk is worked on; a RUNNING chunk with a stale heartbeat may be taken over.
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["run", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "index"], name="evaluation_chunk_unique_index"),
            models.CheckConstraint(
                condition=Q(status__in=ChunkStatus.values), name="evaluation_chunk_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"Run {self.run_id} chunk {self.index} ({self.status})"


class QuestionResult(models.Model):
    """One test question in one run: what the ranker returned and how it scored."""

    run = models.ForeignKey(EvaluationRun, on_delete=models.CASCADE, related_name="question_results")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="evaluation_results")
    # External ids in rank order, and each one's label at run time (None = unlabelled).
    ranked_answer_ids = models.JSONField(default=list)
    labels = models.JSONField(default=list)
    dcg = models.FloatField(null=True, blank=True)
    ideal_dcg = models.FloatField(null=True, blank=True)
    # None when the question has no known relevant answer (ideal DCG = 0).
    ndcg = models.FloatField(null=True, blank=True)
    accuracy_hit = models.BooleanField(null=True, blank=True)
    unlabelled_in_top_k = models.PositiveSmallIntegerField(default=0)
    unknown_answer_ids = models.JSONField(default=list, blank=True)
    # The best possible top k at run time: [[answer external id, label], ...], highest label first.
    ideal = models.JSONField(default=list, blank=True)
    # Share of the top k that had a label (judged@k).
    judged = models.FloatField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["run", "question"], name="question_result_one_per_run")
        ]
        indexes = [models.Index(fields=["run", "ndcg"], name="question_result_worst_first")]

    def __str__(self) -> str:
        return f"Run {self.run_id} question {self.question_id}: {self.ndcg}"
