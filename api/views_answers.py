"""``/api/collections/{slug}/answers/``: a collection's answers, and creating or updating them by id
(one object or a list; all or nothing). The same serializer reads and writes an answer; its metadata is
checked as a search engine's document fields (scalars and lists of scalars)."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import collection_for
from api.bulk import ONE_OR_LIST, UpsertSummarySerializer, validated_items
from api.fields import external_id_field, no_nul_characters
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.formats.records import AnswerRecord
from corpus.models import Answer, Role
from corpus.services import answers_upsert

_SCALAR = [{"type": "string", "nullable": True}, {"type": "number"}, {"type": "boolean"}]


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"oneOf": [*_SCALAR, {"type": "array", "items": {"oneOf": _SCALAR}}]},
        "description": "Fields of your own: each a string, number, boolean or null, or a list of those.",
    }
)
class MetadataField(serializers.DictField):
    """An answer's metadata: what a search engine's document carries besides title and body (Solr's
    fields): scalars and lists of scalars, no nested objects."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        for key, item in value.items():
            items = item if isinstance(item, list) else [item]
            if not all(v is None or isinstance(v, str | int | float | bool) for v in items):
                raise serializers.ValidationError(
                    f"metadata {key!r} must be a string, number, boolean or null, or a list of those."
                )
        return value


class AnswerSerializer(serializers.Serializer):
    id = external_id_field(help_text="Your id for the answer (unique in the collection).")
    title = serializers.CharField(max_length=10_000, allow_blank=True, required=False, default="")
    body = serializers.CharField(max_length=1_000_000, allow_blank=True, required=False, default="")
    metadata = MetadataField(required=False, default=dict, validators=[no_nul_characters])
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, instance):
        return {
            "id": instance.external_id,
            "title": instance.title,
            "body": instance.body,
            "metadata": instance.metadata,
            "created_at": serializers.DateTimeField().to_representation(instance.created_at),
            "updated_at": serializers.DateTimeField().to_representation(instance.updated_at),
        }


# --- views -------------------------------------------------------------------------------------------


class AnswerListView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = AnswerSerializer

    @extend_schema(
        summary="Answers of a collection",
        responses={200: AnswerSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug)
        page = self.paginate_queryset(Answer.objects.filter(collection=collection).order_by("pk"))
        return self.get_paginated_response(AnswerSerializer(page, many=True).data)

    @extend_schema(
        summary="Create or update answers by id (one object or a list; all or nothing)",
        request=AnswerSerializer(many=True),
        extensions=ONE_OR_LIST,
        responses={200: UpsertSummarySerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        items = validated_items(AnswerSerializer, request.data, "answer", unique=lambda i: i["id"])
        records = [AnswerRecord(i["id"], i["title"], i["body"], i["metadata"]) for i in items]
        with transaction.atomic():
            summary = answers_upsert(collection=collection, records=records)
        return Response(UpsertSummarySerializer(summary).data)
