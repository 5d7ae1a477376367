"""What production saw and did, as UBI 1.3.0 records (https://github.com/o19s/ubi): one row per query
answered (``UbiQuery``) and per user event on its results (``UbiEvent``). Columns are the spec's fields;
``extra`` keeps the OpenSearch plugin's own fields (``query``, ``indexes``) so an import exports unchanged.
"""

from __future__ import annotations

from django.db import models
from django.db.models import Q
from django.db.models.fields.json import KeyTransform


class UbiQuery(models.Model):
    query_id = models.CharField(max_length=100, unique=True)
    application = models.CharField(max_length=256, blank=True)
    client_id = models.CharField(max_length=100, blank=True, db_index=True)
    user_id = models.CharField(max_length=100, blank=True)  # stored only when UBI_STORE_USER_ID is on
    user_query = models.TextField(blank=True)
    query_response_id = models.CharField(max_length=100, blank=True)
    query_response_hit_ids = models.JSONField(default=list)  # answer ids in served order
    query_attributes = models.JSONField(default=dict)  # which version(s) ranked it
    object_id_field = models.CharField(max_length=100, blank=True)
    timestamp = models.DateTimeField(db_index=True)
    extra = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = "UBI query"
        indexes = [
            # An online test's queries (rankers.serving.online logs its id), read by each look at its
            # verdict: found without reading the rest of the log.
            models.Index(
                KeyTransform("online_test", "query_attributes"),
                name="ubi_query_online_test",
                condition=Q(query_attributes__has_key="online_test"),
            )
        ]

    def __str__(self) -> str:
        return self.query_id


class UbiEvent(models.Model):
    # Ours, not the spec's: the spool is replayed after a crash, so a row is written at most once by it.
    event_id = models.UUIDField(unique=True)
    application = models.CharField(max_length=256, blank=True)
    action_name = models.CharField(max_length=100)
    query_id = models.CharField(max_length=100, blank=True, db_index=True)
    session_id = models.CharField(max_length=100, blank=True)
    client_id = models.CharField(max_length=100, blank=True, db_index=True)
    user_id = models.CharField(max_length=100, blank=True)
    timestamp = models.DateTimeField(db_index=True)
    message_type = models.CharField(max_length=100, blank=True)
    message = models.CharField(max_length=1024, blank=True)
    event_attributes = models.JSONField(default=dict)
    # event_attributes.position.ordinal and .object.object_id, copied out for the click statistics.
    ordinal = models.PositiveIntegerField(null=True, blank=True)
    object_id = models.CharField(max_length=256, blank=True)

    class Meta:
        verbose_name = "UBI event"

    def __str__(self) -> str:
        return f"{self.action_name} {self.query_id}"
