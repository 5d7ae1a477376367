from django.contrib import admin

from ratings.models import GroundTruthImport, Label, Rating, RatingHistory, Skip
from ratings.services import ground_truth_import_set


class RatingHistoryInline(admin.TabularInline):
    model = RatingHistory
    extra = 0
    readonly_fields = ["previous_stars", "previous_source", "new_stars", "changed_at"]


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ["rater", "question", "answer", "stars", "source", "updated_at"]
    list_filter = ["stars", "source", "question__collection"]
    search_fields = ["rater__username", "question__external_id", "answer__external_id"]
    list_select_related = ["rater", "question", "answer"]
    raw_id_fields = ["question", "answer"]
    inlines = [RatingHistoryInline]


@admin.register(Label)
class LabelAdmin(admin.ModelAdmin):
    list_display = [
        "question",
        "answer",
        "gain",
        "rater_count",
        "judge_count",
        "mean_stars",
        "disagreement",
        "updated_at",
    ]
    list_filter = ["gain", "rater_count", "disagreement", "question__collection"]
    search_fields = ["question__external_id", "answer__external_id"]
    list_select_related = ["question", "answer"]
    raw_id_fields = ["question", "answer"]


@admin.register(Skip)
class SkipAdmin(admin.ModelAdmin):
    list_display = ["rater", "question", "reason", "created_at"]
    search_fields = ["rater__username", "reason"]
    list_select_related = ["rater", "question"]
    raw_id_fields = ["question"]


@admin.register(GroundTruthImport)
class GroundTruthImportAdmin(admin.ModelAdmin):
    """The imports of judgments. Only the unlisted-answers option can change, and it changes through its
    service, as on the manage page; the rest is the import's record."""

    list_display = [
        "id",
        "collection",
        "files",
        "judgments",
        "unlisted_incorrect",
        "created_by",
        "created_at",
    ]
    list_filter = ["unlisted_incorrect", "collection"]
    list_select_related = ["collection", "created_by"]
    fields = ["collection", "files", "judgments", "unlisted_incorrect", "rater", "created_by", "created_at"]
    readonly_fields = ["collection", "files", "judgments", "rater", "created_by", "created_at"]

    def has_add_permission(self, request) -> bool:  # type: ignore[no-untyped-def]
        return False  # an import is made by importing, which also writes its ratings

    def save_model(self, request, obj, form, change) -> None:  # type: ignore[no-untyped-def]
        ground_truth_import_set(record=obj, unlisted_incorrect=obj.unlisted_incorrect)
