"""Training a ranker through the API (``POST /api/rankers/{id}/train/``) and following a training
(``GET /api/trainings/{id}/``): trainers only."""

from __future__ import annotations

from typing import Any

from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import caller_role, ranker_for
from api.responses import AUTH_ERRORS, FORBIDDEN, NOT_FOUND, UNAVAILABLE
from api.version_shape import RankerVersionSerializer
from corpus.models import Role
from trainer.models import Training, TrainingPhase, TrainingStatus
from trainer.services import TrainingConflict, TrainingRefused, TrainingUnavailable, training_start


class TrainingSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    ranker = serializers.IntegerField(source="ranker_id")
    version = serializers.SerializerMethodField(help_text="The version this training created, once it has.")
    status = serializers.ChoiceField(choices=TrainingStatus.choices)
    phase = serializers.ChoiceField(choices=TrainingPhase.choices)
    progress = serializers.FloatField(help_text="0 to 1, across the phases.")
    decision = serializers.ChoiceField(
        choices=[("", "not yet"), ("promoted", "promoted"), ("kept", "kept"), ("manual", "manual")],
        help_text="What the promotion policy did with the new version.",
    )

    class Meta:
        model = Training
        fields = [
            "id",
            "url",
            "ranker",
            "status",
            "phase",
            "progress",
            "error",
            "version",
            "decision",
            "decision_reason",
            "trigger",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_url(self, training: Training) -> str:
        path = reverse("api-training", args=[training.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    @extend_schema_field(RankerVersionSerializer(allow_null=True))
    def get_version(self, training: Training) -> dict[str, Any] | None:
        if training.version is None:
            return None
        return RankerVersionSerializer(training.version).data


class TrainingRefusedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    training_questions = serializers.IntegerField(
        required=False, help_text="Training questions with a relevant label now."
    )
    needed = serializers.IntegerField(
        required=False, help_text="Training questions with a relevant label needed."
    )
    rate_url = serializers.CharField(
        required=False, help_text="The rating queue, kept to training questions."
    )


class TrainingConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    training = serializers.CharField(help_text="URL of the training that is running.")


# --- views -------------------------------------------------------------------------------------------


CONFLICT = {
    409: OpenApiResponse(TrainingConflictSerializer, description="The ranker is already training."),
}


class RankerTrainView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = TrainingSerializer

    @extend_schema(
        summary="Train a new version of a ranker from the current training labels",
        description=(
            "Any kind of ranker trains: a builtin ranker learns to rerank its BM25 candidates, an engine or "
            "http ranker learns a reranker of its service's top answers (its `candidates`, default 50); an "
            "engine ranker's new version also gets its export model for the engine."
        ),
        request=None,
        responses={
            202: OpenApiResponse(TrainingSerializer, description="Training queued; see Location."),
            400: OpenApiResponse(
                TrainingRefusedSerializer,
                description="Too few labelled training questions (says how many more).",
            ),
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
            **CONFLICT,
            **UNAVAILABLE,
        },
    )
    def post(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        try:
            training = training_start(ranker=ranker, created_by=request.user, trigger="api")
        except TrainingRefused as refused:
            readiness = refused.readiness
            return Response(
                {
                    "detail": str(refused),
                    "training_questions": readiness.questions,
                    "needed": readiness.needed,
                    "rate_url": request.build_absolute_uri(readiness.rate_url),
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        except TrainingConflict as conflict:
            url = request.build_absolute_uri(reverse("api-training", args=[conflict.training.pk]))
            return Response({"detail": str(conflict), "training": url}, status=status.HTTP_409_CONFLICT)
        except TrainingUnavailable as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        body = TrainingSerializer(training, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class TrainingDetailView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = TrainingSerializer

    @extend_schema(
        summary="A training: status, phase, progress 0–1, error, and the version it created",
        responses={200: TrainingSerializer, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, training_id: int) -> Response:
        training = (
            Training.objects.select_related("ranker__collection", "version__ranker")
            .filter(pk=training_id)
            .first()
        )
        if training is None or caller_role(request, training.ranker.collection) is None:
            raise NotFound(f"No training {training_id} that you can see.")
        ranker_for(request, training.ranker_id, need=Role.TRAINER)
        return Response(TrainingSerializer(training, context={"request": request}).data)
