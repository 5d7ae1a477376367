from django.contrib import admin

from trainer.models import ApiToken


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
