"""Judging runs: a judge's runs, start one, one run, cancel, resume (409 while the judge is judging, 503
when the work cannot be queued)."""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.fields import no_nul_characters
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND, UNAVAILABLE, ErrorSerializer
from api.views_judges.lookups import _judge_for, _judging_for
from judges.models import Judging, JudgingStatus, Selection
from judges.selectors import judgings_of
from judges.services import (
    MAX_PAIRS,
    JudgingConflict,
    JudgingUnavailable,
    judging_cancel,
    judging_resume,
    judging_start,
)


class PairErrorSerializer(serializers.Serializer):
    question = serializers.IntegerField(help_text="Question id.")
    answer = serializers.IntegerField(help_text="Answer id.")
    error = serializers.CharField()


class JudgingSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    judge = serializers.IntegerField(source="judge_id")
    status = serializers.ChoiceField(choices=JudgingStatus.choices)
    selection = serializers.ChoiceField(choices=Selection.choices)
    total = serializers.IntegerField(help_text="Pairs this run judges.")
    tokens = serializers.IntegerField(help_text="Prompt plus completion tokens.")
    pair_errors = PairErrorSerializer(many=True, help_text="The last errors, per pair.")

    class Meta:
        model = Judging
        fields = [
            "id",
            "url",
            "judge",
            "status",
            "selection",
            "total",
            "judged",
            "failed",
            "requests",
            "retries",
            "prompt_tokens",
            "completion_tokens",
            "tokens",
            "budget_tokens",
            "error",
            "pair_errors",
            "cancel_requested",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_url(self, judging: Judging) -> str:
        return self.context["request"].build_absolute_uri(reverse("api-judging", args=[judging.pk]))


class JudgingStartSerializer(serializers.Serializer):
    selection = serializers.ChoiceField(choices=Selection.choices)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_PAIRS, default=100)
    question_ids = serializers.ListField(
        child=serializers.CharField(max_length=200, validators=[no_nul_characters]),
        max_length=1000,
        required=False,
    )
    budget_tokens = serializers.IntegerField(min_value=0, max_value=10**12, default=0)


CONFLICT = {409: OpenApiResponse(ErrorSerializer, description="The judge is already judging.")}


def _conflict(conflict: JudgingConflict) -> Response:
    return Response({"detail": str(conflict)}, status=status.HTTP_409_CONFLICT)


def _unavailable(exc: JudgingUnavailable) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)


class JudgeJudgingsView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = JudgingSerializer

    @extend_schema(
        summary="The judge's judging runs, newest first",
        responses={200: JudgingSerializer(many=True), **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, judge_id: int) -> Response:
        judge = _judge_for(request, judge_id)
        page = self.paginate_queryset(judgings_of(judge=judge))
        return self.get_paginated_response(
            JudgingSerializer(page, many=True, context={"request": request}).data
        )

    @extend_schema(
        summary="Start a judging run (queue's next pairs, unrated test top 10, questions, overlap sample)",
        request=JudgingStartSerializer,
        responses={
            202: JudgingSerializer,
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
            **CONFLICT,
            **UNAVAILABLE,
        },
    )
    def post(self, request: Request, judge_id: int) -> Response:
        judge = _judge_for(request, judge_id)
        serializer = JudgingStartSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            judging = judging_start(judge=judge, created_by=request.user, **serializer.validated_data)
        except JudgingConflict as conflict:
            return _conflict(conflict)
        except JudgingUnavailable as exc:
            return _unavailable(exc)
        data = JudgingSerializer(judging, context={"request": request}).data
        return Response(data, status=status.HTTP_202_ACCEPTED, headers={"Location": data["url"]})


class JudgingDetailView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = JudgingSerializer

    @extend_schema(
        summary="A judging run: status, progress, requests, tokens, errors",
        responses={200: JudgingSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, judging_id: int) -> Response:
        return Response(
            JudgingSerializer(_judging_for(request, judging_id), context={"request": request}).data
        )


class JudgingCancelView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = JudgingSerializer

    @extend_schema(
        summary="Cancel a judging run (it keeps what it judged)",
        request=None,
        responses={200: JudgingSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def post(self, request: Request, judging_id: int) -> Response:
        judging = judging_cancel(judging=_judging_for(request, judging_id))
        return Response(JudgingSerializer(judging, context={"request": request}).data)


class JudgingResumeView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = JudgingSerializer

    @extend_schema(
        summary="Resume a failed or cancelled run: it judges only the pairs not judged yet",
        request=None,
        responses={
            202: JudgingSerializer,
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
            **CONFLICT,
            **UNAVAILABLE,
        },
    )
    def post(self, request: Request, judging_id: int) -> Response:
        judging = _judging_for(request, judging_id)
        try:
            judging = judging_resume(judging=judging)
        except JudgingConflict as conflict:
            return _conflict(conflict)
        except JudgingUnavailable as exc:
            return _unavailable(exc)
        return Response(
            JudgingSerializer(judging, context={"request": request}).data, status=status.HTTP_202_ACCEPTED
        )
