from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from ubi.models import UbiEvent, UbiQuery
from ubi.services import ubi_client_erase


@admin.action(description="Erase every query and event of the selected rows' clients")
def erase_clients(modeladmin: admin.ModelAdmin, request: HttpRequest, queryset: QuerySet) -> None:
    queries = events = 0
    client_ids = sorted(set(queryset.exclude(client_id="").values_list("client_id", flat=True)))
    for client_id in client_ids:
        q, e = ubi_client_erase(client_id=client_id)
        queries, events = queries + q, events + e
    modeladmin.message_user(
        request,
        f"Erased {len(client_ids)} client(s): {queries} queries and {events} events.",
        messages.SUCCESS,
    )


@admin.register(UbiQuery)
class UbiQueryAdmin(admin.ModelAdmin):
    list_display = ["query_id", "timestamp", "application", "client_id", "user_query"]
    list_filter = ["application"]
    search_fields = ["query_id", "client_id", "user_query"]
    actions = [erase_clients]


@admin.register(UbiEvent)
class UbiEventAdmin(admin.ModelAdmin):
    list_display = ["action_name", "timestamp", "query_id", "client_id", "ordinal", "object_id"]
    list_filter = ["action_name", "application"]
    search_fields = ["query_id", "client_id", "object_id"]
    actions = [erase_clients]
