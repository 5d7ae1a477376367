"""Core domain: collections of questions and answers, who may work in them, and the rankers."""

from __future__ import annotations

import hashlib
import secrets

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q


class GainScheme(models.TextChoices):
    LINEAR = "linear", "Linear (gain = stars)"
    EXPONENTIAL = "exponential", "Exponential (gain = 2^stars - 1)"


class Discount(models.TextChoices):
    LOG2 = "log2", "1/log2(rank + 1) (trec_eval)"
    JARVELIN_KEKALAINEN = (
        "jarvelin_kekalainen",
        "Järvelin–Kekäläinen (rank 1 undiscounted, then 1/log2(rank))",
    )


class Collection(models.Model):
    """A body of answers and the questions asked of it, with how rankings over it are scored."""

    name = models.CharField(max_length=200)
    slug = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    # Evaluation settings. Each EvaluationRun snapshots them so history never shifts silently.
    ndcg_k = models.PositiveSmallIntegerField(
        default=10, validators=[MinValueValidator(1), MaxValueValidator(1000)]
    )
    gain_scheme = models.CharField(max_length=20, choices=GainScheme.choices, default=GainScheme.LINEAR)
    discount = models.CharField(max_length=30, choices=Discount.choices, default=Discount.LOG2)
    relevance_threshold = models.PositiveSmallIntegerField(
        default=1,
        validators=[MinValueValidator(1), MaxValueValidator(3)],
        help_text="Stars that count as correct.",
    )
    accuracy_k = models.PositiveSmallIntegerField(
        default=5, validators=[MinValueValidator(1), MaxValueValidator(1000)]
    )
    test_fraction = models.FloatField(
        default=0.3,
        validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Share of questions assigned to the test split when an import does not say.",
    )
    target_raters = models.PositiveSmallIntegerField(default=1, validators=[MinValueValidator(1)])
    overlap_target_raters = models.PositiveSmallIntegerField(default=3, validators=[MinValueValidator(1)])
    overlap_fraction = models.FloatField(
        default=0.1, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(condition=Q(ndcg_k__gte=1), name="collection_ndcg_k_positive"),
            models.CheckConstraint(condition=Q(accuracy_k__gte=1), name="collection_accuracy_k_positive"),
            models.CheckConstraint(
                condition=Q(relevance_threshold__gte=1, relevance_threshold__lte=3),
                name="collection_relevance_threshold_1_3",
            ),
            models.CheckConstraint(
                condition=Q(test_fraction__gte=0, test_fraction__lte=1), name="collection_test_fraction_0_1"
            ),
            models.CheckConstraint(
                condition=Q(overlap_fraction__gte=0, overlap_fraction__lte=1),
                name="collection_overlap_fraction_0_1",
            ),
        ]

    def __str__(self) -> str:
        return self.name


class Role(models.TextChoices):
    RATER = "rater", "Rater"
    TRAINER = "trainer", "Trainer"


class Membership(models.Model):
    """A user's role in one collection: raters rate; trainers also manage rankers and evaluations."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.RATER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "collection"], name="membership_unique_user_collection"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} ({self.role}) in {self.collection}"


class Answer(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="answers")
    external_id = models.CharField(max_length=200)
    title = models.TextField(blank=True)
    body = models.TextField(blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["collection", "id"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "external_id"], name="answer_unique_external_id"),
        ]

    def __str__(self) -> str:
        return f"{self.external_id}: {self.title[:60]}"


class Split(models.TextChoices):
    TRAIN = "train", "Train"
    TEST = "test", "Test"


class Question(models.Model):
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="questions")
    external_id = models.CharField(max_length=200)
    text = models.TextField()
    split = models.CharField(max_length=5, choices=Split.choices)
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["collection", "id"]
        constraints = [
            models.UniqueConstraint(fields=["collection", "external_id"], name="question_unique_external_id"),
            models.CheckConstraint(condition=Q(split__in=Split.values), name="question_split_valid"),
        ]
        indexes = [models.Index(fields=["collection", "split"], name="question_collection_split")]

    def __str__(self) -> str:
        return self.text[:80]


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
    revoked = models.BooleanField(default=False)

    class Meta:
        constraints = [models.CheckConstraint(condition=Q(role__in=Role.values), name="api_token_role_valid")]

    def __str__(self) -> str:
        return f"{self.name} ({self.key_prefix}…, {self.role} of {self.collection})"

    @staticmethod
    def generate_key() -> str:
        return secrets.token_hex(20)

    @staticmethod
    def hash_key(key: str) -> str:
        return _hash_token(key)
