from django.contrib import admin

from evaluation.models import EvaluationRun, QuestionResult


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = [
        "id",
        "ranker",
        "ranker_version",
        "status",
        "trigger",
        "ndcg_mean",
        "accuracy_mean",
        "created_at",
    ]
    list_filter = ["status", "trigger", "collection"]
    search_fields = ["ranker__name", "error"]
    list_select_related = ["ranker", "ranker_version"]


@admin.register(QuestionResult)
class QuestionResultAdmin(admin.ModelAdmin):
    list_display = ["run", "question", "ndcg", "accuracy_hit", "unlabelled_in_top_k"]
    list_filter = ["accuracy_hit"]
    search_fields = ["question__external_id"]
    list_select_related = ["run", "question"]
    raw_id_fields = ["run", "question"]
