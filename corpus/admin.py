from django.contrib import admin

from corpus.models import Answer, Collection, Membership, Question


class MembershipInline(admin.TabularInline):
    model = Membership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Collection)
class CollectionAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "slug",
        "ndcg_k",
        "gain_scheme",
        "accuracy_k",
        "relevance_threshold",
        "created_at",
    ]
    search_fields = ["name", "slug", "description"]
    prepopulated_fields = {"slug": ["name"]}
    inlines = [MembershipInline]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "collection", "role", "created_at"]
    list_filter = ["role", "collection"]
    search_fields = ["user__username", "collection__name"]
    list_select_related = ["user", "collection"]


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["external_id", "title", "collection", "updated_at"]
    list_filter = ["collection"]
    search_fields = ["external_id", "title", "body"]
    list_select_related = ["collection"]


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["external_id", "text", "split", "collection"]
    list_filter = ["collection", "split"]
    search_fields = ["external_id", "text"]
    list_select_related = ["collection"]
