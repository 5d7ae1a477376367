"""The domain every other app builds on: collections of questions and answers, and who may work in them."""

from __future__ import annotations

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
    # What the rating queue asks for per question: new pairs times the raters each needs (1, or
    # overlap_target_raters on the agreement sample). 20 is where bench_loop measured trained versions
    # closing most of the gap to training on every judgment (bench/README.md).
    rating_budget = models.PositiveSmallIntegerField(
        default=20,
        validators=[MinValueValidator(1), MaxValueValidator(1000)],
        help_text="Ratings the rating queue asks for per question (new answers × raters per answer).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # Change markers: one higher at every write of the collection's answers (questions), so the rating
    # queue tells its candidate table is out of date from this row alone, not by scanning every answer.
    answers_version = models.PositiveBigIntegerField(default=0, db_default=0)
    questions_version = models.PositiveBigIntegerField(default=0, db_default=0)

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

    def save(self, *args, **kwargs) -> None:
        """A save of a collection read before an import leaves the change markers alone: only
        ``corpus.services.collection_changed`` moves them on, by an UPDATE of their own."""
        if not self._state.adding and not args and kwargs.get("update_fields") is None:
            kwargs["update_fields"] = [
                f.name
                for f in self._meta.concrete_fields
                if not f.primary_key and f.name not in ("answers_version", "questions_version")
            ]
        super().save(*args, **kwargs)


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
