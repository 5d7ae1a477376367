import json

from django.contrib import admin

from rankers.config import redacted_config
from rankers.models import Ranker, RankerVersion


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
    # The config holds secrets (auth headers, header values): shown masked and changed through the Rankers
    # pages or the API, which keep masked values, never as raw JSON here.
    exclude = ["config"]
    readonly_fields = ["shown_config"]

    @admin.display(description="Config (secrets masked)")
    def shown_config(self, ranker: Ranker) -> str:
        return json.dumps(redacted_config(ranker.config), indent=2, ensure_ascii=False)


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
