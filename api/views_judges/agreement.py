"""How a judge agrees with people: kappa, alpha, confusion, leniency, NDCG with either labels, and its
least certain judgments."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from api.views_judges.lookups import _judge_for
from judges.selectors import agreement


class SystemSerializer(serializers.Serializer):
    run = serializers.IntegerField()
    ranker = serializers.CharField()
    version = serializers.CharField(allow_null=True)
    ndcg_human = serializers.FloatField(allow_null=True)
    ndcg_judge_same_pairs = serializers.FloatField(allow_null=True)
    ndcg_judge_fills_unrated = serializers.FloatField(allow_null=True)
    difference = serializers.FloatField(allow_null=True)


class UncertainSerializer(serializers.Serializer):
    question = serializers.CharField(help_text="The question's external id.")
    answer = serializers.CharField(help_text="The answer's external id.")
    stars = serializers.IntegerField(help_text="The judge's stars.")
    certainty = serializers.FloatField(
        help_text="How sure the judge was (judges.confidence; per judge kind)."
    )
    people = serializers.IntegerField(
        allow_null=True, help_text="People's grade; null when no person rated it."
    )


class AgreementSerializer(serializers.Serializer):
    judge = serializers.IntegerField()
    pairs = serializers.IntegerField(help_text="Pairs both the judge and people rated.")
    weighted_kappa = serializers.FloatField(allow_null=True, help_text="Cohen's kappa, quadratic weights.")
    krippendorff_alpha = serializers.FloatField(allow_null=True, help_text="Ordinal.")
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Rows: people; columns: judge.",
    )
    leniency = serializers.FloatField(allow_null=True, help_text="Mean of judge's stars − people's grade.")
    exact_agreement = serializers.FloatField(allow_null=True)
    kendall_tau = serializers.FloatField(allow_null=True)
    systems = SystemSerializer(many=True)
    least_certain = UncertainSerializer(
        many=True, help_text="The judge's least certain judgments, least first."
    )


class JudgeAgreementView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = AgreementSerializer

    @extend_schema(
        summary="How the judge agrees with people: kappa, alpha, confusion, leniency, NDCG with either labels",
        responses={200: AgreementSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, judge_id: int) -> Response:
        return Response(agreement(judge=_judge_for(request, judge_id)).as_json())
