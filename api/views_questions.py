"""``/api/collections/{slug}/questions/``: a collection's questions, and creating or updating them by
id (one object or a list; all or nothing). The same serializer reads and writes a question."""

from __future__ import annotations

from django.db import transaction
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import collection_for
from api.bulk import ONE_OR_LIST, UpsertSummarySerializer, validated_items
from api.fields import external_id_field
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.formats.records import QuestionRecord
from corpus.models import Question, Role, Split
from corpus.services import questions_upsert


class QuestionSerializer(serializers.Serializer):
    id = external_id_field(help_text="Your id for the question (unique in the collection).")
    text = serializers.CharField(max_length=10_000)
    split = serializers.ChoiceField(
        choices=Split.choices,
        required=False,
        help_text="train or test. Omitted: an existing question keeps its split; a new one is assigned "
        "by a stable hash and the collection's test fraction.",
    )
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, instance):
        return {
            "id": instance.external_id,
            "text": instance.text,
            "split": instance.split,
            "created_at": serializers.DateTimeField().to_representation(instance.created_at),
            "updated_at": serializers.DateTimeField().to_representation(instance.updated_at),
        }


# --- views -------------------------------------------------------------------------------------------


SPLIT_PARAM = OpenApiParameter(
    "split", str, enum=["train", "test"], required=False, description="Only this split."
)


class QuestionListView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = QuestionSerializer

    @extend_schema(
        summary="Questions of a collection",
        parameters=[SPLIT_PARAM],
        responses={200: QuestionSerializer(many=True), **INVALID, **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug)
        questions = Question.objects.filter(collection=collection).order_by("pk")
        split = request.query_params.get("split")
        if split is not None:
            if split not in Split.values:
                raise ValidationError({"split": [f"split must be train or test, not {split!r}."]})
            questions = questions.filter(split=split)
        page = self.paginate_queryset(questions)
        return self.get_paginated_response(QuestionSerializer(page, many=True).data)

    @extend_schema(
        summary="Create or update questions by id (one object or a list; all or nothing)",
        request=QuestionSerializer(many=True),
        extensions=ONE_OR_LIST,
        responses={200: UpsertSummarySerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
        examples=[
            OpenApiExample(
                "One question",
                value={"id": "q3", "text": "heat transfer at hypersonic speed"},
                request_only=True,
            ),
            OpenApiExample(
                "Two questions",
                value=[
                    {"id": "q1", "text": "what is a boundary layer?"},
                    {"id": "q2", "text": "shock waves", "split": "test"},
                ],
                request_only=True,
            ),
        ],
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        items = validated_items(QuestionSerializer, request.data, "question", unique=lambda i: i["id"])
        records = [QuestionRecord(i["id"], i["text"], i.get("split")) for i in items]
        with transaction.atomic():
            summary = questions_upsert(collection=collection, records=records)
        return Response(UpsertSummarySerializer(summary).data)
