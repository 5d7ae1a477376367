"""Ratings by people (0–3 stars) and the gain labels aggregated from them.

Evaluation reads labels, never raw ratings.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from corpus.models import Answer, Collection, Question

STAR_WORDS = {0: "incorrect", 1: "right topic", 2: "good", 3: "perfect"}
# A rater's note on a rating is a remark ("about a different aircraft"), not an essay.
NOTE_MAX_LENGTH = 500


class RatingSource(models.TextChoices):
    WEB = "web", "Web"
    API = "api", "API"
    IMPORT = "import", "Import"
    JUDGE = "judge", "Judge"


class JudgeAccount(models.Model):
    """The rater account of a judge (a model that rates, ``judges.Judge``) and whether its ratings count.

    It lives here, below the judges app, because the label rule reads it: a judge's ratings count toward
    labels only when a trainer turns ``counts`` on, and then, with ``human_wins``, only on pairs that no
    person rated (otherwise the judge is one more rater in the median).
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="judge_account"
    )
    collection = models.ForeignKey(
        "corpus.Collection", on_delete=models.CASCADE, related_name="judge_accounts"
    )
    counts = models.BooleanField(default=False)
    human_wins = models.BooleanField(default=True)

    def __str__(self) -> str:
        return f"judge account {self.user_id} in {self.collection_id}"


class Rating(models.Model):
    """One rater's judgement of one answer for one question. Re-rating updates it (history kept)."""

    rater = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="ratings")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="ratings")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="ratings")
    stars = models.PositiveSmallIntegerField()
    source = models.CharField(max_length=10, choices=RatingSource.choices, default=RatingSource.WEB)
    # Optional remark of the rater on this judgement; db_default so raw inserts (the hot path) get "".
    note = models.CharField(max_length=NOTE_MAX_LENGTH, blank=True, default="", db_default="")
    # A judge's raw reply (with its reasoning), so people can see why it graded so; empty for people.
    reply = models.TextField(blank=True, default="", db_default="")
    # How sure a judge was of these stars (``judges`` says how each kind measures it; larger is surer),
    # so "Review the judge" can show people the least certain ones; null for people and unknown.
    certainty = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Not a column: on a rating returned by ``ratings.services.rating_record`` (or ``ratings_record``), its
    # pair's label as that save left it, (gain, rater count), or None when the pair has no label. The save
    # computes it anyway, so a caller that shows it (the API) needs no second read.
    saved_label: tuple[int, int] | None

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rater", "question", "answer"], name="rating_one_per_rater_pair"),
            models.CheckConstraint(condition=Q(stars__gte=0, stars__lte=3), name="rating_stars_0_3"),
            models.CheckConstraint(condition=Q(source__in=RatingSource.values), name="rating_source_valid"),
        ]
        indexes = [models.Index(fields=["question", "answer"], name="rating_pair")]

    def __str__(self) -> str:
        return f"{self.rater} rated {self.answer_id} for {self.question_id}: {self.stars}★"


class RatingHistory(models.Model):
    """The value a rating had before it was changed: its stars, source and note (a row per change of
    the stars or of the note; undo restores all three)."""

    rating = models.ForeignKey(Rating, on_delete=models.CASCADE, related_name="history")
    previous_stars = models.PositiveSmallIntegerField()
    previous_source = models.CharField(max_length=10, choices=RatingSource.choices)
    new_stars = models.PositiveSmallIntegerField()
    previous_note = models.CharField(max_length=NOTE_MAX_LENGTH, blank=True, default="", db_default="")
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["rating", "changed_at"]
        verbose_name_plural = "rating history"

    def __str__(self) -> str:
        return f"{self.rating_id}: {self.previous_stars} → {self.new_stars}"


class Label(models.Model):
    """The gain label of a question–answer pair: the median of its raters' stars, a half rounded down."""

    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="labels")
    answer = models.ForeignKey(Answer, on_delete=models.CASCADE, related_name="labels")
    gain = models.PositiveSmallIntegerField()
    rater_count = models.PositiveIntegerField()
    mean_stars = models.FloatField()
    # Spread of the raters' stars (max - min); 2 or more means they disagree.
    disagreement = models.PositiveSmallIntegerField(default=0)
    # How many of the counted ratings came from judges (0 unless a trainer trusts a judge).
    judge_count = models.PositiveIntegerField(default=0, db_default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["question", "answer"], name="label_one_per_pair"),
            models.CheckConstraint(condition=Q(gain__gte=0, gain__lte=3), name="label_gain_0_3"),
            models.CheckConstraint(condition=Q(rater_count__gte=1), name="label_has_raters"),
        ]

    def __str__(self) -> str:
        return f"{self.question_id}/{self.answer_id}: {self.gain}"


class LabelChange(models.Model):
    """A question whose ratings or labels changed, and the mark of the last write that changed them: the
    feed through which a process keeps a collection's labels and each rater's rated pairs up to date by
    reading only what changed (``ratings.selectors.label_changes``). Written by the one label recomputation
    (``ratings.services.labels``), which every rating write, undo and trust change goes through.

    ``mark`` on PostgreSQL: the writing transaction's id (``pg_current_xact_id()``), so a reader that
    remembers the oldest transaction still running when it read (its snapshot's xmin) finds every change
    committed since, in whatever order transactions commit; elsewhere (SQLite, which runs one writer at a
    time): one more than the collection's highest mark."""

    question = models.OneToOneField(Question, on_delete=models.CASCADE, primary_key=True, related_name="+")
    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="+", db_index=False)
    mark = models.BigIntegerField()

    class Meta:
        indexes = [models.Index(fields=["collection", "mark"], name="label_change_feed")]

    def __str__(self) -> str:
        return f"labels of {self.question_id} changed at {self.mark}"


class Skip(models.Model):
    """A rater said they cannot judge a question ("can't judge"), with an optional reason."""

    rater = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="skips")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="skips")
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["rater", "question"], name="skip_one_per_rater_question")
        ]

    def __str__(self) -> str:
        return f"{self.rater} skipped {self.question_id}"


UNLISTED_INCORRECT_LABEL = "Answers not listed for a judged question are incorrect (0 stars)"


class GroundTruthImport(models.Model):
    """One import of judgments (a ground truth: R&R CSV, TREC qrels, Quepid, RRE) into a collection: its
    files, the questions it judged and how the learner reads the answers it does not list.

    ``unlisted_incorrect`` is the TREC assumption, chosen per import and reversible: on, an answer the
    import does not list for one of its judged questions is 0 stars for the learner (the fit, the
    cross-validation, the tree export's fit and the positive-only detection), as trec_eval, R&R's training,
    Quepid and RRE read a ground truth; off, it is unknown, as an answer nobody rated through the queue.
    The labels themselves do not change: only what the learner reads between them.
    """

    collection = models.ForeignKey(
        "corpus.Collection", on_delete=models.CASCADE, related_name="ground_truth_imports"
    )
    # The import rater whose ratings the judgments became (``trainer.services.import_rater``).
    rater = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    # The trainer who imported it (None: a command, the demo, or an import from before imports were kept).
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # The names of the import's files, ", "-joined ("" for an import from before imports were kept).
    files = models.CharField(max_length=500, blank=True, default="")
    judgments = models.PositiveIntegerField(default=0)
    unlisted_incorrect = models.BooleanField(default=True, verbose_name=UNLISTED_INCORRECT_LABEL)
    # The questions the import judged (at least one answer listed).
    questions = models.ManyToManyField(Question, related_name="ground_truth_imports")

    class Meta:
        ordering = ["collection", "id"]

    def __str__(self) -> str:
        return self.name

    @property
    def name(self) -> str:
        """How pages and figures name it: "import 3 (qrels.test)"."""
        return f"import {self.pk} ({self.files})" if self.files else f"import {self.pk}"
