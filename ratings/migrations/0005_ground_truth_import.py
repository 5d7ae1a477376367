"""Imports of judgments kept as rows, each with its "answers not listed are incorrect" option.

The imports made before (ratings of source "import") become one row per collection and import rater with
the option on, which is how the learner read them until now: their figures do not change.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def earlier_imports_record(apps, schema_editor):
    Rating = apps.get_model("ratings", "Rating")
    GroundTruthImport = apps.get_model("ratings", "GroundTruthImport")
    Through = GroundTruthImport.questions.through
    pairs = (
        Rating.objects.filter(source="import")
        .values_list("question__collection_id", "rater_id")
        .distinct()
        .order_by("question__collection_id", "rater_id")
    )
    for collection_id, rater_id in pairs:
        ratings = Rating.objects.filter(
            source="import", rater_id=rater_id, question__collection_id=collection_id
        )
        record = GroundTruthImport.objects.create(
            collection_id=collection_id,
            rater_id=rater_id,
            judgments=ratings.count(),
            unlisted_incorrect=True,
        )
        first = ratings.order_by("created_at").values_list("created_at", flat=True).first()
        if first is not None:
            GroundTruthImport.objects.filter(pk=record.pk).update(created_at=first)
        question_ids = ratings.values_list("question_id", flat=True).distinct()
        Through.objects.bulk_create(
            [Through(groundtruthimport_id=record.pk, question_id=q) for q in question_ids], batch_size=5000
        )


class Migration(migrations.Migration):
    dependencies = [
        ("corpus", "0002_collection_rating_budget"),
        ("ratings", "0004_rating_certainty"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="GroundTruthImport",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                ("files", models.CharField(blank=True, default="", max_length=500)),
                ("judgments", models.PositiveIntegerField(default=0)),
                (
                    "unlisted_incorrect",
                    models.BooleanField(
                        default=True,
                        verbose_name="Answers not listed for a judged question are incorrect (0 stars)",
                    ),
                ),
                (
                    "collection",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="ground_truth_imports",
                        to="corpus.collection",
                    ),
                ),
                (
                    "created_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                ("questions", models.ManyToManyField(related_name="ground_truth_imports", to="corpus.question")),
                (
                    "rater",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
            options={"ordering": ["collection", "id"]},
        ),
        migrations.RunPython(earlier_imports_record, migrations.RunPython.noop),
    ]
