"""Rankers (whatever orders a collection's answers for a question) and their versions."""

from __future__ import annotations

from django.db import models
from django.db.models import Q

from corpus.models import Collection


class RankerKind(models.TextChoices):
    BUILTIN = "builtin", "Built-in (BM25 + LambdaMART)"
    HTTP = "http", "HTTP service"


class Ranker(models.Model):
    """Whatever orders a collection's answers for a question: the built-in ranker or an HTTP service."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="rankers")
    name = models.CharField(max_length=200)
    kind = models.CharField(max_length=10, choices=RankerKind.choices)
    config = models.JSONField(default=dict, blank=True)
    is_default = models.BooleanField(
        default=False, help_text="The ranker whose results the rating queue uses."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["collection", "name"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "name"], name="ranker_unique_name"),
            models.UniqueConstraint(
                fields=["collection"], condition=Q(is_default=True), name="ranker_one_default_per_collection"
            ),
            models.CheckConstraint(condition=Q(kind__in=RankerKind.values), name="ranker_kind_valid"),
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
    details = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["ranker", "-created_at"]
        get_latest_by = "created_at"
        constraints = [
            models.UniqueConstraint(fields=["ranker", "label"], name="ranker_version_unique_label")
        ]

    def __str__(self) -> str:
        return f"{self.ranker.name} {self.label}"
