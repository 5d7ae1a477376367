from django.contrib import admin
from django.db import models

from judges.models import Judge, Judging


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    """The API key is write-only: the admin neither shows nor edits it (trainers set it on the judge page)."""

    list_display = ["name", "collection", "kind", "model", "base_url", "reply_format"]
    list_filter = ["kind", "collection"]
    exclude = ["api_key"]
    readonly_fields = ["account", "calibration", "has_api_key"]
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}

    @admin.display(boolean=True, description="API key set")
    def has_api_key(self, judge: Judge) -> bool:
        return judge.has_api_key


@admin.register(Judging)
class JudgingAdmin(admin.ModelAdmin):
    list_display = ["pk", "judge", "status", "selection", "judged", "failed", "requests", "created_at"]
    list_filter = ["status", "selection"]
    exclude = ["pairs"]
    readonly_fields = ["judge", "created_by", "pair_errors"]
