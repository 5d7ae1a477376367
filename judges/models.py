"""Judges (a model that rates question–answer pairs beside people) and their judging runs.

A judge rates through its own rater account (``ratings.JudgeAccount``, which also says whether its
ratings count toward labels), so its judgments are ordinary ratings with source ``judge``.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from corpus.models import Collection
from jobs.models import WorkerJob
from ratings.models import JudgeAccount

PLACEHOLDERS = ("{question}", "{answer}")

DEFAULT_PROMPT = """You judge how well an answer answers a question, on a 0-3 scale:
{scale}

{examples}Question: {question}

Answer: {answer}

{reply_instructions}"""


class JudgeKind(models.TextChoices):
    BUILTIN = "builtin", "Builtin (no network)"
    OPENAI_CHAT = "openai-chat", "OpenAI chat completions"
    # Stars from production clicks (``evaluation.selectors.clicks``); its ``model`` names the click model,
    # "dbn", "coec" or "pbm".
    CLICKS = "clicks", "Clicks (production log)"


class ReplyFormat(models.TextChoices):
    DIGIT = "digit", "One digit 0–3"
    JSON = "json", 'JSON {"grade": 0–3, "reasoning": "..."}'
    REASONING = "reasoning", "Reasoning, then a last line 'Grade: N'"


class Judge(models.Model):
    """A judge of one collection. The API key is write-only: stored, never shown, logged or returned."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="judges")
    account = models.OneToOneField(JudgeAccount, on_delete=models.CASCADE, related_name="judge")
    name = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=JudgeKind.choices, default=JudgeKind.BUILTIN)
    base_url = models.URLField(max_length=500, blank=True)
    model = models.CharField(max_length=200, blank=True)
    api_key = models.CharField(max_length=500, blank=True)
    temperature = models.FloatField(default=0.0)
    concurrency = models.PositiveSmallIntegerField(default=4)
    # 0: no limit of our own (the service's 429s still slow us down).
    requests_per_minute = models.PositiveIntegerField(default=60)
    timeout_seconds = models.FloatField(default=60.0)
    prompt_template = models.TextField(default=DEFAULT_PROMPT)
    reply_format = models.CharField(max_length=10, choices=ReplyFormat.choices, default=ReplyFormat.DIGIT)
    # Worked examples drawn from the collection's own human labels (one per grade, up to this many).
    few_shot = models.PositiveSmallIntegerField(default=0)
    # Ask the service for token log-probabilities (``logprobs``/``top_logprobs``) to measure how sure it
    # is of each grade; off by default because some services refuse these parameters.
    logprobs = models.BooleanField(default=False)
    # The builtin judge's thresholds as last calibrated; a clicks judge's log figures and star thresholds
    # (shown on its page).
    calibration = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "name"], name="judge_name_unique_per_collection"),
            models.CheckConstraint(condition=Q(kind__in=JudgeKind.values), name="judge_kind_valid"),
            models.CheckConstraint(
                condition=Q(temperature__gte=0, temperature__lte=2), name="judge_temperature_0_2"
            ),
            models.CheckConstraint(
                condition=Q(concurrency__gte=1, concurrency__lte=64), name="judge_concurrency_1_64"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind}) in {self.collection_id}"

    @property
    def has_api_key(self) -> bool:
        return bool(self.api_key)


class JudgingStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


ACTIVE_JUDGING = (JudgingStatus.QUEUED, JudgingStatus.RUNNING)


class Selection(models.TextChoices):
    QUEUE = "queue", "The rating queue's next pairs"
    TEST_TOP = "test-top", "Unrated pairs in the test questions' top 10"
    QUESTIONS = "questions", "The candidates of chosen questions"
    OVERLAP = "overlap", "Pairs people rated in the overlap sample (calibration)"
    CLICKED = "clicked", "Pairs with click evidence in the production log"


class Judging(WorkerJob):
    """One judging run: a job row claimed by one worker, with progress, counts and the pairs it judges.

    The pairs are fixed when the run starts; a pair the judge has rated is skipped, so a run that failed
    or was cancelled keeps what it judged and a resumed run does only the rest.
    """

    # From jobs.models.WorkerJob: created_at, started_at, finished_at, error, claimed_by, heartbeat_at,
    # attempts.
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="judgings")
    status = models.CharField(max_length=10, choices=JudgingStatus.choices, default=JudgingStatus.QUEUED)
    selection = models.CharField(max_length=10, choices=Selection.choices)
    # [[question id, answer id], ...] in the order they are judged.
    pairs = models.JSONField(default=list)
    judged = models.PositiveIntegerField(default=0)
    failed = models.PositiveIntegerField(default=0)
    requests = models.PositiveIntegerField(default=0)
    retries = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    # 0: no cap. The run stops (failed, resumable) when its tokens reach the cap.
    budget_tokens = models.PositiveBigIntegerField(default=0)
    # The last few per-pair errors: [{"question": id, "answer": id, "error": "..."}].
    pair_errors = models.JSONField(default=list, blank=True)
    cancel_requested = models.BooleanField(default=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["judge"], condition=Q(status__in=ACTIVE_JUDGING), name="judging_one_active_per_judge"
            ),
            models.CheckConstraint(condition=Q(status__in=JudgingStatus.values), name="judging_status_valid"),
        ]

    def __str__(self) -> str:
        return f"judging {self.pk} of judge {self.judge_id} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_JUDGING

    @property
    def total(self) -> int:
        return len(self.pairs)

    @property
    def done(self) -> int:
        return self.judged + self.failed

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 100

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def resumable(self) -> bool:
        return self.status in (JudgingStatus.FAILED, JudgingStatus.CANCELLED)
