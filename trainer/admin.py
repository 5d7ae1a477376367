from django.contrib import admin

from trainer.models import Answer, ApiToken, Collection, Membership, Question, Ranker, RankerVersion


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


class RankerVersionInline(admin.TabularInline):
    model = RankerVersion
    extra = 0
    fields = ("label", "created_at", "label_count", "uses_model", "cv_ndcg_model", "cv_ndcg_bm25")
    readonly_fields = fields


@admin.register(Ranker)
class RankerAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "collection", "is_default", "created_at"]
    list_filter = ["kind", "collection", "is_default"]
    search_fields = ["name"]
    list_select_related = ["collection"]
    inlines = [RankerVersionInline]


@admin.register(RankerVersion)
class RankerVersionAdmin(admin.ModelAdmin):
    list_display = [
        "ranker",
        "label",
        "created_at",
        "label_count",
        "uses_model",
        "cv_ndcg_model",
        "cv_ndcg_bm25",
    ]
    list_filter = ["uses_model", "ranker__collection"]
    search_fields = ["label", "ranker__name", "notes"]
    list_select_related = ["ranker"]


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "key_prefix",
        "collection",
        "role",
        "user",
        "created_at",
        "last_used_at",
        "revoked",
    ]
    list_filter = ["role", "revoked", "collection"]
    search_fields = ["name", "key_prefix", "user__username"]
    readonly_fields = ["key_prefix", "key_hash", "last_used_at"]
    list_select_related = ["collection", "user"]
