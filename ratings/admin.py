from django.contrib import admin

from ratings.models import Label, Rating, RatingHistory, Skip


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
