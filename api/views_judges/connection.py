"""Test connection: a judge grades one pair now (nothing saved), with its raw reply."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from api.views_judges.lookups import _judge_for
from judges.services import judge_test


class TestOutcomeSerializer(serializers.Serializer):
    question = serializers.CharField()
    answer = serializers.CharField()
    prompt = serializers.CharField()
    reply = serializers.CharField(help_text="The judge's raw reply.")
    stars = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(help_text="Empty when the judge answered a usable grade.")


class JudgeTestView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = TestOutcomeSerializer

    @extend_schema(
        summary="Test connection: grade one pair now (nothing saved) and show the raw reply",
        request=None,
        responses={200: TestOutcomeSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def post(self, request: Request, judge_id: int) -> Response:
        outcome = judge_test(judge=_judge_for(request, judge_id))
        return Response(TestOutcomeSerializer(outcome).data)
