"""``/api/rankers/`` and ``GET /api/rankers/{id}/``: the rankers of the collections the caller can see,
and creating one (its config checked). ``PATCH`` of a ranker and trying one are in ``views_engines.py``.
The same serializer reads and writes a ranker: secrets in its config are shown masked."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import caller_role, ranker_for, visible_collections
from api.fields import no_nul_characters
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from api.version_shape import RankerVersionSerializer
from corpus.models import Collection, Role
from rankers.config import redacted_config, validate_ranker_config
from rankers.models import PromotionPolicy, Ranker, RankerKind
from rankers.services import ranker_create

_QUERY_VALUES = {
    "type": "object",
    "additionalProperties": {
        "oneOf": [{"type": "string"}, {"type": "number"}, {"type": "array", "items": {"type": "string"}}]
    },
}


@extend_schema_field(
    {
        "type": "object",
        "description": "builtin: candidates. http: url (required), headers, auth_header, timeout, retries. "
        "engine: preset, url (required), request {method, headers, params, form or body}, response {hits, "
        "id, score, errors}, auth_header, timeout, retries (see rankers/engine_config/). Secrets "
        "(auth_header, header values) are shown masked. Unknown keys are refused.",
        "properties": {
            "candidates": {"type": "integer", "minimum": 10, "maximum": 1000, "description": "builtin"},
            "preset": {
                "type": "string",
                "enum": ["elasticsearch", "opensearch", "opensearch-hybrid", "solr", "custom"],
                "description": "engine",
            },
            "url": {"type": "string", "maxLength": 2000, "description": "http, engine"},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "http"},
            "request": {
                "type": "object",
                "description": "engine: the request template ({{question}}, {{rows}} placeholders)",
                "properties": {
                    "method": {"type": "string", "enum": ["GET", "POST"]},
                    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                    "params": _QUERY_VALUES,
                    "form": _QUERY_VALUES,
                    "body": {
                        "type": "object",
                        "description": "The engine's own query (Elasticsearch DSL ...), sent as JSON",
                    },
                },
                "additionalProperties": False,
            },
            "response": {
                "type": "object",
                "description": "engine: dotted paths to the hits, and each hit's id and score",
                "properties": {
                    "hits": {"type": "string"},
                    "id": {"type": "string"},
                    "score": {"type": "string"},
                    "errors": {"type": "array", "items": {"type": "string"}},
                },
                "additionalProperties": False,
            },
            "auth_header": {"type": "string", "description": "sent as Authorization"},
            "timeout": {"type": "number", "exclusiveMinimum": True, "minimum": 0, "maximum": 120},
            "retries": {"type": "integer", "minimum": 0, "maximum": 5},
        },
        "additionalProperties": False,
    }
)
class RankerConfigField(serializers.DictField):
    pass


class RankerSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    collection = serializers.SlugField(max_length=100, help_text="Slug of the collection the ranker ranks.")
    name = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=RankerKind.choices)
    config = RankerConfigField(required=False, default=dict, validators=[no_nul_characters])
    is_default = serializers.BooleanField(required=False, default=False)
    champion = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="Id of the champion version."
    )
    promotion_policy = serializers.ChoiceField(choices=PromotionPolicy.choices, read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    versions = RankerVersionSerializer(many=True, read_only=True, help_text="Newest first (at most 20).")

    def validate(self, attrs):
        try:
            attrs["config"] = validate_ranker_config(kind=attrs["kind"], config=attrs.get("config", {}))
        except DjangoValidationError as exc:  # one message per config key
            raise serializers.ValidationError({"config": exc.message_dict}) from None
        return attrs

    def to_representation(self, instance):
        versions = sorted(instance.versions.all(), key=lambda v: (v.created_at, v.pk), reverse=True)[:20]
        return {
            "id": instance.pk,
            "collection": instance.collection.slug,
            "name": instance.name,
            "kind": instance.kind,
            "config": redacted_config(instance.config),
            "is_default": instance.is_default,
            "champion": instance.champion_id,
            "promotion_policy": instance.promotion_policy,
            "created_at": serializers.DateTimeField().to_representation(instance.created_at),
            "versions": RankerVersionSerializer(versions, many=True).data,
        }


# --- views -------------------------------------------------------------------------------------------


def _rankers(request: Request) -> QuerySet[Ranker]:
    collections, roles = visible_collections(request)
    return (
        Ranker.objects.filter(collection_id__in=list(roles))
        .select_related("collection")
        .prefetch_related("versions")
        .order_by("collection__slug", "name", "pk")
    )


class RankerListView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = RankerSerializer

    @extend_schema(
        summary="Rankers of the collections you can see",
        parameters=[
            OpenApiParameter("collection", str, required=False, description="Only this collection's.")
        ],
        responses={200: RankerSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request) -> Response:
        rankers = _rankers(request)
        if "collection" in request.query_params:
            rankers = rankers.filter(collection__slug=request.query_params["collection"])
        page = self.paginate_queryset(rankers)
        return self.get_paginated_response(RankerSerializer(page, many=True).data)

    @extend_schema(
        summary="Create a ranker (config is checked)",
        request=RankerSerializer,
        responses={201: RankerSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN},
        examples=[
            OpenApiExample(
                "An HTTP ranker",
                value={
                    "collection": "cranfield",
                    "name": "My service",
                    "kind": "http",
                    "config": {"url": "http://127.0.0.1:8077/", "timeout": 5, "retries": 2},
                },
                request_only=True,
            )
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = RankerSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        collection = Collection.objects.filter(slug=data["collection"]).first()
        role = caller_role(request, collection) if collection is not None else None
        if collection is None or role is None:
            raise ValidationError({"collection": [f"No collection {data['collection']!r} that you can see."]})
        if role != Role.TRAINER:
            raise PermissionDenied(
                f"Creating rankers needs the trainer role in collection {collection.slug!r}."
            )
        ranker = ranker_create(
            collection=collection,
            name=data["name"],
            kind=data["kind"],
            config=data["config"],
            is_default=data["is_default"],
        )
        return Response(RankerSerializer(ranker).data, status=status.HTTP_201_CREATED)


class RankerDetailView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = RankerSerializer

    @extend_schema(
        summary="One ranker with its versions",
        responses={200: RankerSerializer, **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id)
        return Response(RankerSerializer(ranker).data)
