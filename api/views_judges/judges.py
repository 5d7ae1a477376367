"""A collection's judges: list, create (builtin, or any OpenAI chat-completions service), one, change
(settings or trust), delete. The API key is write-only: accepted on create and update, never returned."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import collection_for
from api.fields import no_nul_characters
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from api.views_judges.lookups import _judge_for
from corpus.models import Role
from judges.models import Judge, JudgeKind, ReplyFormat
from judges.selectors import judges_of
from judges.services import judge_create, judge_delete, judge_trust, judge_update


class CalibrationSerializer(serializers.Serializer):
    """How a builtin judge turned its score into stars; empty for an openai-chat judge."""

    thresholds = serializers.ListField(
        child=serializers.FloatField(),
        required=False,
        help_text="Scores from which 1, 2 and 3 stars are given.",
    )
    labels = serializers.IntegerField(
        required=False, help_text="Training-question labels it was calibrated on."
    )
    signal = serializers.ChoiceField(choices=["bm25-ratio", "propagation-mean"], required=False)
    fallback = serializers.CharField(required=False, help_text="Why the BM25 ratio alone is used, if it is.")


class JudgeSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    calibration = CalibrationSerializer()
    collection = serializers.CharField(source="collection.slug")
    base_url = serializers.CharField(help_text="Empty for a builtin judge.")
    has_api_key = serializers.BooleanField(
        help_text="Whether a key is stored; the key itself is never returned."
    )
    counts = serializers.BooleanField(source="account.counts", help_text="Its ratings count toward labels.")
    human_wins = serializers.BooleanField(
        source="account.human_wins", help_text="People's ratings win over the judge's on the same pair."
    )

    class Meta:
        model = Judge
        fields = [
            "id",
            "url",
            "collection",
            "name",
            "kind",
            "base_url",
            "model",
            "has_api_key",
            "temperature",
            "concurrency",
            "requests_per_minute",
            "timeout_seconds",
            "prompt_template",
            "reply_format",
            "few_shot",
            "logprobs",
            "calibration",
            "counts",
            "human_wins",
            "created_at",
        ]
        read_only_fields = fields

    def get_url(self, judge: Judge) -> str:
        return self.context["request"].build_absolute_uri(reverse("api-judge", args=[judge.pk]))


class JudgeWriteSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=100, validators=[no_nul_characters])
    kind = serializers.ChoiceField(choices=JudgeKind.choices, default=JudgeKind.BUILTIN)
    base_url = serializers.CharField(
        max_length=500, required=False, allow_blank=True, validators=[no_nul_characters]
    )
    model = serializers.CharField(
        max_length=200, required=False, allow_blank=True, validators=[no_nul_characters]
    )
    api_key = serializers.CharField(
        max_length=500,
        required=False,
        allow_blank=True,
        write_only=True,
        validators=[no_nul_characters],
        help_text='Write-only. Omit to keep the stored key; "" removes it.',
    )
    temperature = serializers.FloatField(min_value=0, max_value=2, required=False)
    concurrency = serializers.IntegerField(min_value=1, max_value=64, required=False)
    requests_per_minute = serializers.IntegerField(min_value=0, max_value=1_000_000, required=False)
    timeout_seconds = serializers.FloatField(min_value=1, max_value=600, required=False)
    prompt_template = serializers.CharField(max_length=20_000, required=False, validators=[no_nul_characters])
    reply_format = serializers.ChoiceField(choices=ReplyFormat.choices, required=False)
    few_shot = serializers.IntegerField(min_value=0, max_value=12, required=False)
    logprobs = serializers.BooleanField(
        required=False,
        help_text="Ask the service for token log-probabilities (the judge's confidence in each grade).",
    )
    counts = serializers.BooleanField(required=False, help_text="Let its ratings count toward labels.")
    human_wins = serializers.BooleanField(required=False)


def _save_trust(judge: Judge, data: dict) -> None:
    if "counts" in data or "human_wins" in data:
        judge_trust(
            judge=judge,
            counts=data.get("counts", judge.account.counts),
            human_wins=data.get("human_wins", judge.account.human_wins),
        )


class JudgeListView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = JudgeSerializer

    @extend_schema(
        summary="The collection's judges",
        responses={200: JudgeSerializer(many=True), **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        page = self.paginate_queryset(judges_of(collection=collection))
        return self.get_paginated_response(
            JudgeSerializer(page, many=True, context={"request": request}).data
        )

    @extend_schema(
        summary="Create a judge (builtin, or any OpenAI chat-completions service)",
        request=JudgeWriteSerializer,
        responses={201: JudgeSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        serializer = JudgeWriteSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        trust = {k: data.pop(k) for k in ("counts", "human_wins") if k in data}
        judge = judge_create(collection=collection, **data)
        _save_trust(judge, trust)
        return Response(
            JudgeSerializer(judge, context={"request": request}).data, status=status.HTTP_201_CREATED
        )


class JudgeDetailView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = JudgeSerializer

    @extend_schema(
        summary="A judge (never its API key)",
        responses={200: JudgeSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, judge_id: int) -> Response:
        return Response(JudgeSerializer(_judge_for(request, judge_id), context={"request": request}).data)

    @extend_schema(
        summary="Change a judge's settings or trust (whether its ratings count toward labels)",
        request=JudgeWriteSerializer(partial=True),
        responses={200: JudgeSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def patch(self, request: Request, judge_id: int) -> Response:
        judge = _judge_for(request, judge_id)
        serializer = JudgeWriteSerializer(data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        trust = {k: data.pop(k) for k in ("counts", "human_wins") if k in data}
        api_key = data.pop("api_key", None)
        judge = judge_update(judge=judge, api_key=api_key, **data)
        _save_trust(judge, trust)
        return Response(JudgeSerializer(judge, context={"request": request}).data)

    @extend_schema(
        summary="Delete a judge with its runs and ratings",
        responses={204: None, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def delete(self, request: Request, judge_id: int) -> Response:
        judge_delete(judge=_judge_for(request, judge_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
