"""Evaluation runs: a ranker's history and starting one (``/api/rankers/{id}/evaluations/``), and one run
with its per-question results (``GET /api/evaluations/{id}/``). A rater's view of a test question's
result leaves out what its labels would show."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import caller_role, ranker_for
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND, UNAVAILABLE
from api.version_shape import RankerVersionSerializer
from corpus.models import Role
from corpus.permissions import can_see_labels
from evaluation.models import EvaluationRun, QuestionResult, RunTrigger, Verdict
from evaluation.selectors import question_results, run_detail, runs_for_ranker, unknown_ids
from evaluation.services import evaluation_start
from rankers.models import RankerVersion
from rankers.selectors import ranking_version

# --- what the caller sends ---------------------------------------------------------------------------


class EvaluationStartSerializer(serializers.Serializer):
    version = serializers.CharField(
        max_length=100, required=False, help_text="Label of the version to evaluate (default: the latest)."
    )


# --- what comes back ---------------------------------------------------------------------------------


class EvaluationRunSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    ranker = serializers.IntegerField(source="ranker_id")
    version = serializers.SerializerMethodField()
    collection = serializers.CharField(source="collection.slug")
    progress_percent = serializers.IntegerField()
    questions_attempted = serializers.IntegerField(
        source="questions_done", help_text="Test questions the ranker was asked (answered or failed)."
    )
    questions_failed = serializers.IntegerField(
        help_text="Attempted test questions the ranker could not rank (each has its error)."
    )
    questions_not_attempted = serializers.IntegerField(
        help_text="Test questions never asked because the run stopped early (it could no longer succeed)."
    )
    first_error = serializers.CharField(help_text="The first error a question met, empty when none did.")
    verdict = serializers.ChoiceField(
        choices=Verdict.choices,
        allow_blank=True,
        help_text="Against the previous successful run of the ranker (paired randomization test, p < 0.05), "
        "both runs' rankings scored with this run's labels as NDCG@k on rated answers (each ranking condensed "
        "to its rated answers: every comparison's measure; `delta` is that difference); empty until compared.",
    )

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "url",
            "ranker",
            "version",
            "collection",
            "status",
            "trigger",
            "created_at",
            "started_at",
            "finished_at",
            "error",
            "questions_total",
            "questions_done",
            "questions_attempted",
            "questions_failed",
            "questions_not_attempted",
            "first_error",
            "progress_percent",
            "ndcg_k",
            "gain_scheme",
            "discount",
            "relevance_threshold",
            "accuracy_k",
            "label_count",
            "ndcg_mean",
            "ndcg_ci_low",
            "ndcg_ci_high",
            "accuracy_mean",
            "judged_mean",
            "unlabelled_in_top_k",
            "no_good_answer_count",
            "previous_run",
            "delta",
            "delta_ci_low",
            "delta_ci_high",
            "p_value",
            "verdict",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "ndcg_mean": {"help_text": "Mean NDCG@k over test questions with a known good answer (0–1)."},
            "accuracy_mean": {
                "help_text": "Share of those questions with a correct answer in the top accuracy_k."
            },
        }

    def get_url(self, obj: EvaluationRun) -> str:
        request = self.context.get("request")
        path = reverse("api-evaluation-detail", args=[obj.pk])
        return request.build_absolute_uri(path) if request else path

    def get_version(self, obj: EvaluationRun) -> str | None:
        return obj.ranker_version.label if obj.ranker_version else None


# What a question's result says about its labels: hidden (null) from callers who may not see them.
LABEL_FIELDS = ("labels", "dcg", "ideal_dcg", "ndcg", "accuracy_hit")


class QuestionResultSerializer(serializers.ModelSerializer):
    """A question's result. For a caller who may not see its split's labels (``can_see_labels``: raters
    and rater tokens, on test questions) the fields computed from labels are null: the labels
    themselves, and DCG, ideal DCG, NDCG and the accuracy hit, from which they could be worked out."""

    ranked_answer_ids = serializers.ListField(
        child=serializers.CharField(), help_text="The answer ids the ranker returned, best first."
    )
    labels = serializers.ListField(
        child=serializers.IntegerField(allow_null=True),
        allow_null=True,
        help_text="Each ranked answer's label (0–3 stars) at run time, null when unrated.",
    )
    unknown_answer_ids = serializers.ListField(
        child=serializers.CharField(), help_text="Ranked ids the collection does not have."
    )

    question_id = serializers.CharField(source="question.external_id")
    question = serializers.CharField(source="question.text")

    def to_representation(self, instance: QuestionResult) -> dict:
        data = super().to_representation(instance)
        if not can_see_labels(role=self.context.get("role"), split=instance.question.split):
            data.update(dict.fromkeys(LABEL_FIELDS))
        return data

    class Meta:
        model = QuestionResult
        fields = [
            "question_id",
            "question",
            "ndcg",
            "dcg",
            "ideal_dcg",
            "accuracy_hit",
            "ranked_answer_ids",
            "labels",
            "unlabelled_in_top_k",
            "unknown_answer_ids",
            "error",
        ]
        read_only_fields = fields


class UnknownIdsSerializer(serializers.Serializer):
    questions = serializers.IntegerField(
        help_text="Questions whose ranking held answer ids the collection lacks."
    )
    ids = serializers.IntegerField(help_text="How many such ids in all.")
    examples = serializers.ListField(child=serializers.CharField(), help_text="Up to 5 of them.")


class EvaluationDetailSerializer(EvaluationRunSerializer):
    questions = serializers.SerializerMethodField()
    unknown_answer_ids = serializers.SerializerMethodField(
        help_text="Answer ids the ranker returned that the collection does not have (they count as unrated)."
    )

    class Meta(EvaluationRunSerializer.Meta):
        fields = [*EvaluationRunSerializer.Meta.fields, "unknown_answer_ids", "questions"]
        read_only_fields = fields

    @extend_schema_field(UnknownIdsSerializer)
    def get_unknown_answer_ids(self, obj: EvaluationRun):
        return self.context["unknown_ids"].as_json()

    @extend_schema_field(QuestionResultSerializer(many=True))
    def get_questions(self, obj: EvaluationRun):
        return QuestionResultSerializer(
            self.context["question_results"], many=True, context={"role": self.context.get("role")}
        ).data


class EvaluationStartedSerializer(serializers.Serializer):
    evaluation = EvaluationRunSerializer()
    version = RankerVersionSerializer(required=False)


# --- views -------------------------------------------------------------------------------------------


def evaluation_started(request: Request, run, version: RankerVersion | None = None) -> Response:
    body: dict[str, Any] = {"evaluation": EvaluationRunSerializer(run, context={"request": request}).data}
    if version is not None:
        body["version"] = RankerVersionSerializer(version).data
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["evaluation"]["url"]})


class RankerEvaluationsView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = EvaluationRunSerializer

    @extend_schema(
        summary="Evaluation history of a ranker, newest first",
        responses={200: EvaluationRunSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id)
        page = self.paginate_queryset(runs_for_ranker(ranker=ranker))
        return self.get_paginated_response(
            EvaluationRunSerializer(page, many=True, context={"request": request}).data
        )

    @extend_schema(
        summary="Start an evaluation of the ranker on every test question",
        request=EvaluationStartSerializer,
        responses={
            202: OpenApiResponse(EvaluationStartedSerializer, description="Evaluation queued; see Location."),
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
            **UNAVAILABLE,
        },
    )
    def post(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        serializer = EvaluationStartSerializer(data=request.data or {})
        serializer.is_valid(raise_exception=True)
        label = serializer.validated_data.get("version")
        versions = RankerVersion.objects.filter(ranker=ranker)
        if label is not None:
            version = versions.filter(label=label).first()
            if version is None:
                raise ValidationError({"version": [f"Ranker {ranker.pk} has no version {label!r}."]})
        else:
            version = ranking_version(ranker=ranker)
        run = evaluation_start(
            ranker=ranker, ranker_version=version, trigger=RunTrigger.API, created_by=request.user
        )
        return evaluation_started(request, run)


class EvaluationDetailView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = EvaluationDetailSerializer

    @extend_schema(
        summary="An evaluation: status, progress, headline metrics and per-question results",
        responses={200: EvaluationDetailSerializer, **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = run_detail(run_id=run_id)
        if run is None or caller_role(request, run.collection) is None:
            raise NotFound(f"No evaluation {run_id} that you can see.")
        context = {
            "request": request,
            "question_results": question_results(run=run),
            "role": caller_role(request, run.collection),
            "unknown_ids": unknown_ids(run=run),
        }
        return Response(EvaluationDetailSerializer(run, context=context).data)
