"""Rankers (whatever orders a collection's answers for a question) and their versions."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from corpus.models import Collection
from jobs.models import Job


class RankerKind(models.TextChoices):
    BUILTIN = "builtin", "Built-in (BM25, semantic similarity, learned from ratings)"
    HTTP = "http", "HTTP service"
    ENGINE = "engine", "Search engine (Elasticsearch, OpenSearch, Solr)"


class PromotionPolicy(models.TextChoices):
    BETTER = "better", "Promote only if significantly better (p < 0.05)"
    SETTLED = "settled", "Promote only if significantly better, also counting the unrated answers (settled)"
    NOT_WORSE = "not-worse", "Promote unless significantly worse (p < 0.05)"
    MANUAL = "manual", "Never automatically: a trainer promotes"
    ONLINE = "online", "Promote on a significant win of its online test (interleaving, p < 0.05)"
    ONLINE_AND_OFFLINE = (
        "online-and-offline",
        "Promote only if significantly better offline (p < 0.05) and on its online test",
    )


class Ranker(models.Model):
    """Whatever orders a collection's answers for a question: the built-in ranker, an HTTP service or a
    search engine called directly."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="rankers")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=RankerKind.choices)
    config = models.JSONField(default=dict, blank=True)
    is_default = models.BooleanField(
        default=False, help_text="The ranker whose results the rating queue uses."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The version that ranks unless another is named (queue, evaluations, ranker_server).
    champion = models.ForeignKey(
        "RankerVersion", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    promotion_policy = models.CharField(
        max_length=20, choices=PromotionPolicy.choices, default=PromotionPolicy.BETTER
    )
    # Automatic training, off unless set: after this many new training labels, and/or every so many hours.
    auto_train_labels = models.PositiveIntegerField(null=True, blank=True)
    auto_train_hours = models.PositiveSmallIntegerField(null=True, blank=True)

    class Meta:
        ordering = ["collection", "name"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "name"], name="ranker_unique_name"),
            models.UniqueConstraint(
                fields=["collection"], condition=Q(is_default=True), name="ranker_one_default_per_collection"
            ),
            models.CheckConstraint(condition=Q(kind__in=RankerKind.values), name="ranker_kind_valid"),
            models.CheckConstraint(
                condition=Q(promotion_policy__in=PromotionPolicy.values), name="ranker_policy_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.kind})"


class RankerVersion(models.Model):
    """One trained (builtin) or announced (http) model of a ranker."""

    ranker = models.ForeignKey(Ranker, on_delete=models.CASCADE, related_name="versions")
    label = models.CharField(max_length=100)
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    label_count = models.PositiveIntegerField(
        default=0, help_text="Training labels the version learned from."
    )
    feature_importances = models.JSONField(default=dict, blank=True)
    model_file = models.CharField(max_length=500, blank=True)
    # Cross-validated NDCG@k on training questions, for the model and for plain BM25 (builtin only).
    cv_ndcg_model = models.FloatField(null=True, blank=True)
    cv_ndcg_bm25 = models.FloatField(null=True, blank=True)
    uses_model = models.BooleanField(default=False, help_text="False when BM25's order was kept.")
    # How the version ranks (builtin): "bm25", "fusion", "learned-fusion" or "lambdamart"; "" for http.
    method = models.CharField(max_length=20, blank=True)
    details = models.JSONField(default=dict, blank=True)
    # Its test-split evaluation against the champion of the moment (figures, verdict), when trained here.
    comparison = models.JSONField(default=dict, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["ranker", "-created_at"]
        get_latest_by = "created_at"
        constraints = [
            models.UniqueConstraint(fields=["ranker", "label"], name="ranker_version_unique_label")
        ]

    def __str__(self) -> str:
        return f"{self.ranker.name} {self.label}"


class ChampionChange(models.Model):
    """Every change of a ranker's champion: who, when, why, with the figures that decided it."""

    ranker = models.ForeignKey(Ranker, on_delete=models.CASCADE, related_name="champion_changes")
    version = models.ForeignKey(RankerVersion, on_delete=models.CASCADE, related_name="+")
    previous = models.ForeignKey(
        RankerVersion, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # None: the promotion policy decided after a training.
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    reason = models.TextField()
    figures = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["ranker", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.ranker.name}: champion {self.version.label}"


class BuildStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"


class EmbeddingBuildQuerySet(models.QuerySet["EmbeddingBuild"]):
    def succeeded(self) -> EmbeddingBuildQuerySet:
        """The builds that finished: their embeddings are on disk."""
        return self.filter(status=BuildStatus.SUCCEEDED)


class EmbeddingBuild(Job):
    """Computing the answer embeddings of one state (index fingerprint) of a collection: a job row.

    The answers to encode are split into parts, one Celery task each, so several workers share the work;
    a part's vectors are kept in their own file, so a killed worker's part is simply done again.
    """

    # From jobs.models.Job: created_at, started_at, finished_at, error.
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="embedding_builds")
    fingerprint = models.CharField(max_length=64)
    status = models.CharField(max_length=10, choices=BuildStatus.choices, default=BuildStatus.QUEUED)
    answers_total = models.PositiveIntegerField(default=0)
    answers_reused = models.PositiveIntegerField(
        default=0, help_text="Unchanged texts from an earlier build."
    )
    parts_total = models.PositiveIntegerField(default=0)
    parts_done = models.PositiveIntegerField(default=0)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    seconds = models.FloatField(null=True, blank=True)

    objects = EmbeddingBuildQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "fingerprint"], name="embedding_build_unique_state"
            ),
            models.CheckConstraint(
                condition=Q(status__in=BuildStatus.values), name="embedding_build_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"embeddings of {self.collection_id} at {self.fingerprint[:8]} ({self.status})"

    @property
    def progress(self) -> float:
        return 1.0 if self.status == BuildStatus.SUCCEEDED else self.parts_done / max(self.parts_total, 1)


class OnlineTestState(models.TextChoices):
    RUNNING = "running", "Running"
    STOPPED = "stopped", "Stopped"


class OnlineTest(models.Model):
    """A challenger tested against the champion on live traffic: ``ranker_server`` serves the team-draft
    interleaving of both rankings for ``share`` % of the queries (``rankers.interleaving``) and logs each
    hit's team in the UBI query; clicks decide (``evaluation.selectors.online``). One running test per
    collection."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="online_tests")
    champion = models.ForeignKey(RankerVersion, on_delete=models.CASCADE, related_name="+")
    challenger = models.ForeignKey(RankerVersion, on_delete=models.CASCADE, related_name="online_tests")
    share = models.PositiveSmallIntegerField(default=100, help_text="Percent of the queries interleaved.")
    # The stop rule: after this many interleaved queries (None: no budget), and/or once there is a verdict.
    max_queries = models.PositiveIntegerField(null=True, blank=True)
    stop_on_verdict = models.BooleanField(default=True)
    state = models.CharField(max_length=10, choices=OnlineTestState.choices, default=OnlineTestState.RUNNING)
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    started_at = models.DateTimeField(auto_now_add=True)
    stopped_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    stopped_at = models.DateTimeField(null=True, blank=True)
    stop_reason = models.TextField(blank=True)

    class Meta:
        ordering = ["collection", "-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection"], condition=Q(state="running"), name="online_test_one_running"
            ),
            models.CheckConstraint(condition=Q(share__lte=100), name="online_test_share_percent"),
            models.CheckConstraint(condition=Q(state__in=OnlineTestState.values), name="online_test_state"),
        ]

    def __str__(self) -> str:
        return f"{self.challenger} vs {self.champion.label} online ({self.state})"
