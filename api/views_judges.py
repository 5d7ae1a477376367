"""The REST API of judges: CRUD, test connection, judging runs (start, status, cancel, resume) and the
agreement figures. Thin views over ``judges.services`` and ``judges.selectors``; trainers only (raters
get 403, other collections 404). The API key is write-only: accepted on create and update, never returned.
"""

from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import caller_role, collection_for
from api.fields import no_nul_characters
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND, UNAVAILABLE, ErrorSerializer
from corpus.models import Role
from judges.models import Judge, JudgeKind, Judging, JudgingStatus, ReplyFormat, Selection
from judges.selectors import agreement, judges_of, judgings_of
from judges.services import (
    MAX_PAIRS,
    JudgingConflict,
    JudgingUnavailable,
    judge_create,
    judge_delete,
    judge_test,
    judge_trust,
    judge_update,
    judging_cancel,
    judging_resume,
    judging_start,
)


def _no_nul(value):
    no_nul_characters(value)
    return value


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
    name = serializers.CharField(max_length=100, validators=[_no_nul])
    kind = serializers.ChoiceField(choices=JudgeKind.choices, default=JudgeKind.BUILTIN)
    base_url = serializers.CharField(max_length=500, required=False, allow_blank=True, validators=[_no_nul])
    model = serializers.CharField(max_length=200, required=False, allow_blank=True, validators=[_no_nul])
    api_key = serializers.CharField(
        max_length=500,
        required=False,
        allow_blank=True,
        write_only=True,
        validators=[_no_nul],
        help_text='Write-only. Omit to keep the stored key; "" removes it.',
    )
    temperature = serializers.FloatField(min_value=0, max_value=2, required=False)
    concurrency = serializers.IntegerField(min_value=1, max_value=64, required=False)
    requests_per_minute = serializers.IntegerField(min_value=0, max_value=1_000_000, required=False)
    timeout_seconds = serializers.FloatField(min_value=1, max_value=600, required=False)
    prompt_template = serializers.CharField(max_length=20_000, required=False, validators=[_no_nul])
    reply_format = serializers.ChoiceField(choices=ReplyFormat.choices, required=False)
    few_shot = serializers.IntegerField(min_value=0, max_value=12, required=False)
    logprobs = serializers.BooleanField(
        required=False,
        help_text="Ask the service for token log-probabilities (the judge's confidence in each grade).",
    )
    counts = serializers.BooleanField(required=False, help_text="Let its ratings count toward labels.")
    human_wins = serializers.BooleanField(required=False)


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
        child=serializers.CharField(max_length=200, validators=[_no_nul]), max_length=1000, required=False
    )
    budget_tokens = serializers.IntegerField(min_value=0, max_value=10**12, default=0)


class TestOutcomeSerializer(serializers.Serializer):
    question = serializers.CharField()
    answer = serializers.CharField()
    prompt = serializers.CharField()
    reply = serializers.CharField(help_text="The judge's raw reply.")
    stars = serializers.IntegerField(allow_null=True)
    error = serializers.CharField(help_text="Empty when the judge answered a usable grade.")


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


CONFLICT = {409: OpenApiResponse(ErrorSerializer, description="The judge is already judging.")}


def _judge_for(request: Request, judge_id: int) -> Judge:
    judge = Judge.objects.select_related("collection", "account").filter(pk=judge_id).first()
    if judge is None or caller_role(request, judge.collection) is None:
        raise NotFound(f"No judge {judge_id} that you can see.")
    collection_for(request, judge.collection.slug, need=Role.TRAINER)
    return judge


def _judging_for(request: Request, judging_id: int) -> Judging:
    judging = Judging.objects.select_related("judge__collection").filter(pk=judging_id).first()
    if judging is None or caller_role(request, judging.judge.collection) is None:
        raise NotFound(f"No judging {judging_id} that you can see.")
    collection_for(request, judging.judge.collection.slug, need=Role.TRAINER)
    return judging


def _save_trust(judge: Judge, data: dict) -> None:
    if "counts" in data or "human_wins" in data:
        judge_trust(
            judge=judge,
            counts=data.get("counts", judge.account.counts),
            human_wins=data.get("human_wins", judge.account.human_wins),
        )


def _conflict(conflict: JudgingConflict) -> Response:
    return Response({"detail": str(conflict)}, status=status.HTTP_409_CONFLICT)


def _unavailable(exc: JudgingUnavailable) -> Response:
    return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)


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


class JudgeAgreementView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = AgreementSerializer

    @extend_schema(
        summary="How the judge agrees with people: kappa, alpha, confusion, leniency, NDCG with either labels",
        responses={200: AgreementSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, judge_id: int) -> Response:
        return Response(agreement(judge=_judge_for(request, judge_id)).as_json())


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
