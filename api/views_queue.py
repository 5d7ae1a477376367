"""``GET /api/collections/{slug}/queue/``: the next pairs the rating queue wants from the caller.

A thin view over ``raters.next_task.modes.mode_pairs``, so an external rating tool or script can drive the queue;
ratings come back through ``POST /api/collections/{slug}/ratings/``.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import collection_for
from api.responses import ErrorSerializer, ValidationErrorSerializer
from corpus.models import Answer, Question
from raters.next_task.modes import MODE_DECIDE, MODES, mode_pairs

N_MIN, N_MAX, N_DEFAULT = 1, 50, 10


class QueueQuestionSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The question's id (as imported).")
    text = serializers.CharField()
    split = serializers.ChoiceField(choices=["train", "test"])


class QueueAnswerSerializer(serializers.Serializer):
    id = serializers.CharField(help_text="The answer's id (as imported); rate it with this id.")
    title = serializers.CharField(allow_blank=True)
    body = serializers.CharField(allow_blank=True)


class QueuePairSerializer(serializers.Serializer):
    question = QueueQuestionSerializer()
    answer = QueueAnswerSerializer()
    reason = serializers.CharField(help_text="Why this pair, in the words the rating page shows.")


class QueueSerializer(serializers.Serializer):
    mode = serializers.ChoiceField(choices=list(MODES))
    pairs = QueuePairSerializer(many=True, help_text="Most useful first; none the caller already rated.")


def _n(value: str | None) -> int:
    if value is None or value == "":
        return N_DEFAULT
    if not value.isdigit() or not N_MIN <= int(value) <= N_MAX:
        raise ValidationError({"n": [f"n must be a whole number from {N_MIN} to {N_MAX}, not {value!r}."]})
    return int(value)


def _version_id(name: str, value: str | None) -> str:
    if value in (None, ""):
        return ""
    assert value is not None
    if not value.isdigit():
        raise ValidationError({name: [f"{name} must be a version id (a whole number), not {value!r}."]})
    return value


class QueueView(GenericAPIView):
    renderer_classes = [JSONRenderer]
    pagination_class = None
    serializer_class = QueueSerializer

    @extend_schema(
        summary="The next pairs to rate, for the caller's own rater account",
        description="`mode=decide` (default): test pairs whose rating most changes whether the challenger "
        "beats the champion (the ranker's champion and its newest other version unless `champion` / "
        "`challenger` name version ids), or the headline NDCG@k without a challenger. `mode=unsure`: "
        "training pairs whose stars the ranker is least sure of. Never a pair the caller rated, nor one of "
        "a question they skipped. Rate them with `POST /api/collections/{slug}/ratings/`.",
        parameters=[
            OpenApiParameter("mode", str, enum=list(MODES), required=False),
            OpenApiParameter(
                "n", int, required=False, description=f"{N_MIN} to {N_MAX} (default {N_DEFAULT})."
            ),
            OpenApiParameter("champion", int, required=False, description="Version id (decide mode)."),
            OpenApiParameter("challenger", int, required=False, description="Version id (decide mode)."),
        ],
        responses={
            200: QueueSerializer,
            400: OpenApiResponse(ValidationErrorSerializer, description="Bad input: messages per field."),
            401: OpenApiResponse(ErrorSerializer, description="No credentials, or a wrong or revoked token."),
            404: OpenApiResponse(ErrorSerializer, description="No such collection that you can see."),
            429: OpenApiResponse(ErrorSerializer, description="Too many requests; retry after Retry-After."),
        },
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug)
        params = request.query_params
        mode = params.get("mode") or MODE_DECIDE
        errors: dict[str, list[str]] = {}
        if mode not in MODES:
            errors["mode"] = [f"mode must be one of {', '.join(MODES)}, not {mode!r}."]
        try:
            n = _n(params.get("n"))
        except ValidationError as error:
            errors.update(error.detail)  # type: ignore[arg-type]
            n = N_DEFAULT
        ids: dict[str, str] = {}
        for name in ("champion", "challenger"):
            try:
                ids[name] = _version_id(name, params.get(name))
            except ValidationError as error:
                errors.update(error.detail)  # type: ignore[arg-type]
        if errors:
            raise ValidationError(errors)
        pairs = mode_pairs(
            collection=collection,
            rater=request.user,  # type: ignore[arg-type]
            mode=mode,
            champion_id=ids["champion"],
            challenger_id=ids["challenger"],
        )[:n]
        questions = Question.objects.filter(collection=collection).in_bulk([p.question_id for p in pairs])
        answers = Answer.objects.filter(collection=collection).in_bulk([p.answer_id for p in pairs])
        body: list[dict[str, Any]] = [
            {
                "question": {
                    "id": questions[p.question_id].external_id,
                    "text": questions[p.question_id].text,
                    "split": questions[p.question_id].split,
                },
                "answer": {
                    "id": answers[p.answer_id].external_id,
                    "title": answers[p.answer_id].title,
                    "body": answers[p.answer_id].body,
                },
                "reason": p.reason,
            }
            for p in pairs
        ]
        return Response({"mode": mode, "pairs": body})
