"""The REST API of clicks as evidence: a collection's implicit judgments from its production log
(``evaluation.selectors.clicks``), their agreement with people and judges (``judges.clicks``), and adding
frequent production queries as questions (``ubi.production_questions``). Trainers only, like the pages:
raters get 403, other collections 404. The GETs' parameters are query parameters, checked like a body: a
bad one is a 400 naming it.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import collection_for
from api.fields import no_nul_characters
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.models import Role
from evaluation.selectors.clicks import (
    DEFAULT_MAX_RANK,
    DEFAULT_METHOD,
    MAX_MAX_RANK,
    METHODS,
    ClickParameters,
    implicit_judgments_cached,
)
from judges.clicks import clicks_beside_ratings
from ubi.production_questions import MAX_IMPORTED, production_questions_import


class ClickParametersSerializer(serializers.Serializer):
    max_rank = serializers.IntegerField(
        min_value=1,
        max_value=MAX_MAX_RANK,
        default=DEFAULT_MAX_RANK,
        help_text="SRW's maxRank: only events at ranks 1 to this count.",
    )
    start_date = serializers.DateField(required=False, help_text="First UTC day (YYYY-MM-DD), included.")
    end_date = serializers.DateField(required=False, help_text="Last UTC day (YYYY-MM-DD), included.")
    application = serializers.CharField(
        required=False,
        max_length=256,
        validators=[no_nul_characters],
        help_text="The UBI application whose log is read; default the collection's slug.",
    )

    def validate(self, data):
        start, end = data.get("start_date"), data.get("end_date")
        if start and end and start > end:
            raise serializers.ValidationError({"end_date": "The range ends before it starts."})
        return data

    def parameters(self) -> ClickParameters:
        data = self.validated_data
        return ClickParameters(
            max_rank=data["max_rank"],
            start_date=data.get("start_date"),
            end_date=data.get("end_date"),
            application=data.get("application", ""),
        )


class ImplicitJudgmentsQuerySerializer(ClickParametersSerializer):
    model = serializers.ChoiceField(
        choices=list(METHODS),
        default=DEFAULT_METHOD,
        help_text="The click model whose stars are each pair's `stars`: dbn (the cascade model, the default), "
        "coec or pbm.",
    )


PARAMETERS = [
    OpenApiParameter(
        "max_rank", int, description=f"SRW's maxRank, 1–{MAX_MAX_RANK} (default {DEFAULT_MAX_RANK})."
    ),
    OpenApiParameter("start_date", str, description="First UTC day, YYYY-MM-DD, included."),
    OpenApiParameter("end_date", str, description="Last UTC day, YYYY-MM-DD, included."),
    OpenApiParameter("application", str, description="UBI application; default the collection's slug."),
]


class ParametersUsedSerializer(serializers.Serializer):
    max_rank = serializers.IntegerField()
    start_date = serializers.DateField(allow_null=True)
    end_date = serializers.DateField(allow_null=True)
    application = serializers.CharField()


class StarStepSerializer(serializers.Serializer):
    stars = serializers.IntegerField()
    below = serializers.FloatField(allow_null=True, help_text="Upper bound, excluded; null: none.")

    def get_fields(self):
        fields = super().get_fields()
        # "from" is a Python keyword: the field is added by name.
        fields["from"] = serializers.FloatField(
            allow_null=True, help_text="Lower bound, included; null: none."
        )
        return fields


class StarMappingSerializer(serializers.Serializer):
    dbn = StarStepSerializer(many=True)
    coec = StarStepSerializer(many=True)
    pbm = StarStepSerializer(many=True)


class UnmatchedSerializer(serializers.Serializer):
    query = serializers.CharField(help_text="Normalised text (case-folded, spaces collapsed).")
    count = serializers.IntegerField(help_text="Query records with this text.")


class RankCtrSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    ctr = serializers.FloatField()


class RankExaminationSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    examination = serializers.FloatField()


class ImplicitJudgmentSerializer(serializers.Serializer):
    question = serializers.CharField(help_text="The question's id.")
    answer = serializers.CharField(help_text="The answer's id.")
    query = serializers.CharField(help_text="The normalised query text matched to the question.")
    clicks = serializers.IntegerField()
    impressions = serializers.IntegerField()
    best_rank = serializers.IntegerField(allow_null=True)
    coec = serializers.FloatField(help_text="Clicks over expected clicks (SRW).")
    coec_stars = serializers.IntegerField(allow_null=True, help_text="null: no impression.")
    attractiveness = serializers.FloatField(
        allow_null=True, help_text="Position-based model; null: never seen."
    )
    pbm_impressions = serializers.IntegerField()
    pbm_stars = serializers.IntegerField(allow_null=True)
    dbn_attractiveness = serializers.FloatField(
        allow_null=True,
        help_text="Cascade (DBN) model: the chance a user who reads the hit clicks it; null: never read.",
    )
    dbn_satisfaction = serializers.FloatField(
        allow_null=True,
        help_text="Cascade model: the chance a click on it ends the search; null: never clicked.",
    )
    dbn_reads = serializers.IntegerField(
        help_text="Sessions (query ids) that surely read it: at or above their last click, or without clicks."
    )
    dbn_stars = serializers.IntegerField(allow_null=True)
    stars = serializers.IntegerField(allow_null=True, help_text="The stars of `model`; null: no evidence.")
    value = serializers.FloatField(allow_null=True, help_text="The figure of `model` the stars come from.")


class ImplicitJudgmentsSerializer(serializers.Serializer):
    parameters = ParametersUsedSerializer()
    model = serializers.ChoiceField(choices=list(METHODS), help_text="Whose stars `stars` are.")
    events = serializers.IntegerField(help_text="Events used (rank ≤ max_rank, in the date range).")
    queries = serializers.IntegerField(help_text="Query records of the application in the date range.")
    matched_queries = serializers.IntegerField(help_text="Of them, those whose text is a question's.")
    unmatched_texts = serializers.IntegerField(help_text="Distinct texts no question has.")
    unmatched = UnmatchedSerializer(many=True, help_text="The most frequent of them.")
    unknown_answer_pairs = serializers.IntegerField(help_text="Matched texts with an id that is no answer.")
    expected_ctr = RankCtrSerializer(many=True)
    examination = RankExaminationSerializer(many=True)
    pbm_iterations = serializers.IntegerField()
    pbm_converged = serializers.BooleanField()
    dbn_iterations = serializers.IntegerField()
    dbn_converged = serializers.BooleanField()
    dbn_sessions = serializers.IntegerField(help_text="Sessions (query ids) the cascade model read.")
    stars = StarMappingSerializer()
    judgments = ImplicitJudgmentSerializer(many=True)


class ComparisonSerializer(serializers.Serializer):
    method = serializers.ChoiceField(choices=list(METHODS))
    grader = serializers.CharField(help_text='"people", or a judge\'s name.')
    pairs = serializers.IntegerField()
    confusion = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Rows: the grader's stars; columns: the clicks'.",
    )
    weighted_kappa = serializers.FloatField(allow_null=True)
    exact_agreement = serializers.FloatField(allow_null=True)
    kendall_tau = serializers.FloatField(allow_null=True, help_text="τ-b of the stars and the click figure.")
    two_or_more_apart = serializers.IntegerField()


class FarPairSerializer(serializers.Serializer):
    question = serializers.CharField()
    answer = serializers.CharField()
    people = serializers.IntegerField()
    method = serializers.ChoiceField(
        choices=list(METHODS), help_text="Whose stars `stars` are (the default)."
    )
    stars = serializers.IntegerField(allow_null=True)
    dbn_stars = serializers.IntegerField(allow_null=True)
    coec_stars = serializers.IntegerField(allow_null=True)
    pbm_stars = serializers.IntegerField(allow_null=True)


class ClicksAgreementSerializer(serializers.Serializer):
    parameters = ParametersUsedSerializer()
    comparisons = ComparisonSerializer(many=True)
    two_or_more_apart = FarPairSerializer(
        many=True, help_text="People and the default click model's stars (dbn) 2+ apart."
    )


def _parameters(request: Request) -> ClickParameters:
    serializer = ClickParametersSerializer(data=request.query_params)
    serializer.is_valid(raise_exception=True)
    return serializer.parameters()


class ImplicitJudgmentsView(GenericAPIView):
    serializer_class = ImplicitJudgmentsSerializer
    pagination_class = None

    @extend_schema(
        summary="A collection's implicit judgments from its production clicks",
        description="The cascade (DBN) click model's attractiveness, COEC as OpenSearch's Search Relevance "
        "Workbench computes it and the position-based click model's attractiveness, each with 0–3 stars and "
        "the mapping (`model` picks whose stars are each pair's `stars`), for every logged (query, answer) "
        "whose query text is a question's (case and spacing aside); the queries no question matches, "
        "counted. Trainers only.",
        parameters=[
            *PARAMETERS,
            OpenApiParameter("model", str, enum=list(METHODS), description="dbn (default), coec or pbm."),
        ],
        responses={200: ImplicitJudgmentsSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        query = ImplicitJudgmentsQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        judgments = implicit_judgments_cached(collection=collection, parameters=query.parameters())
        return Response(judgments.as_json(collection, query.validated_data["model"]))


class ClicksAgreementView(GenericAPIView):
    serializer_class = ClicksAgreementSerializer
    pagination_class = None

    @extend_schema(
        summary="How the click stars agree with people and each judge",
        description="Per click method (dbn, coec, pbm) and grader (people, then each judge with ratings), on the "
        "pairs with both: count, confusion, weighted kappa, exact agreement, Kendall tau-b, and the pairs "
        "where people and the default method (dbn) are 2 or more stars apart. Trainers only.",
        parameters=PARAMETERS,
        responses={200: ClicksAgreementSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        parameters = _parameters(request)
        return Response(
            clicks_beside_ratings(collection=collection, parameters=parameters).as_json(collection)
        )


class ProductionQuestionsSerializer(serializers.Serializer):
    queries = serializers.ListField(
        child=serializers.CharField(max_length=10000, validators=[no_nul_characters]),
        min_length=1,
        max_length=MAX_IMPORTED,
        help_text="Logged query texts (compared case-folded, spaces collapsed), e.g. from implicit-judgments' "
        "`unmatched`.",
    )
    application = serializers.CharField(
        required=False,
        max_length=256,
        validators=[no_nul_characters],
        help_text="The UBI application whose log is read; default the collection's slug.",
    )


class CreatedQuestionSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="ubi- and 12 hex digits of the SHA-1 of the normalised text.")
    text = serializers.CharField(help_text="The commonest logged spelling.")
    split = serializers.CharField()


class ProductionQuestionsResultSerializer(serializers.Serializer):
    created = CreatedQuestionSerializer(many=True)
    already_questions = serializers.IntegerField(help_text="Texts the collection already had as questions.")


class ProductionQuestionsView(GenericAPIView):
    serializer_class = ProductionQuestionsSerializer
    parser_classes = [JSONParser]

    @extend_schema(
        summary="Add frequent production queries as questions",
        description="New questions from query texts the production log holds; a text some question already "
        "has is counted, not added; a text never logged is a 400 naming `queries`. Trainers only.",
        request=ProductionQuestionsSerializer,
        responses={
            201: ProductionQuestionsResultSerializer,
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
        },
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        serializer = ProductionQuestionsSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            imported = production_questions_import(
                collection=collection,
                queries=serializer.validated_data["queries"],
                application=serializer.validated_data.get("application", ""),
            )
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict) from None
        return Response(
            {
                "created": [
                    {"id": q.external_id, "text": q.text, "split": q.split} for q in imported.created
                ],
                "already_questions": imported.already,
            },
            status=status.HTTP_201_CREATED,
        )
