"""API for changing a ranker's config (``PATCH /api/rankers/{id}/``) and trying a ranker on one question
(``POST /api/rankers/{id}/try/``), made for search-engine rankers (kind ``engine``) and open to every kind.

Secrets (``auth_header``, header values) are never returned: reads show them masked, and a masked value
sent back keeps the stored one (``rankers.services.ranker_config_update``).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import ranker_for
from api.fields import no_nul_characters
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from api.views_rankers import RankerConfigField, RankerDetailView, RankerSerializer
from corpus.models import Role
from rankers.services import ranker_config_update
from rankers.trial import MAX_QUESTION_CHARS, MAX_ROWS, TryResult, ranker_try

ES_EXAMPLE = {
    "preset": "elasticsearch",
    "url": "https://search.example.com:9200/answers/_search",
    "auth_header": "ApiKey <base64 id:key>",
    "timeout": 5,
}


class RankerConfigSerializer(serializers.Serializer):
    config = RankerConfigField(
        validators=[no_nul_characters],
        help_text="The whole new config, checked as on create. Masked secrets ('********') keep the stored ones.",
    )


class TrySerializer(serializers.Serializer):
    question = serializers.CharField(max_length=MAX_QUESTION_CHARS, validators=[no_nul_characters])
    rows = serializers.IntegerField(
        min_value=1, max_value=MAX_ROWS, required=False, help_text="Default: the collection's k (10)."
    )


class TriedAnswerSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    id = serializers.CharField()
    score = serializers.FloatField()
    title = serializers.CharField(allow_null=True, help_text="null: an id the collection does not know.")


class TryFailureSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="The error, as evaluations report it.")
    transient = serializers.BooleanField(
        help_text="A timeout, refused connection or 5xx, still failing after the retries."
    )
    part = serializers.CharField(
        allow_null=True,
        help_text="Engine rankers: the mapping path that failed, e.g. response.hits.hits[3]._id.",
    )
    engine_message = serializers.CharField(
        allow_null=True, help_text="Engine rankers: the engine's own error message, shortened."
    )
    status = serializers.IntegerField(
        allow_null=True, help_text="The engine's HTTP status, when it answered."
    )


class TryResultSerializer(serializers.Serializer):
    ok = serializers.BooleanField()
    question = serializers.CharField()
    rows = serializers.IntegerField()
    seconds = serializers.FloatField()
    answers = TriedAnswerSerializer(many=True)
    unknown_ids = serializers.ListField(child=serializers.CharField())
    error = TryFailureSerializer(allow_null=True)


def try_result_data(result: TryResult) -> dict[str, Any]:
    error = result.error
    return {
        "ok": result.ok,
        "question": result.question,
        "rows": result.rows,
        "seconds": round(result.seconds, 3),
        "answers": [{"rank": a.rank, "id": a.id, "score": a.score, "title": a.title} for a in result.answers],
        "unknown_ids": result.unknown_ids,
        "error": None
        if error is None
        else {
            "detail": error.detail,
            "transient": error.transient,
            "part": error.part,
            "engine_message": error.engine_message,
            "status": error.status,
        },
    }


# The docstring is both operations' description in the published schema, kept word for word: the GET
# is views_rankers.RankerDetailView.
class RankerDetailUpdateView(RankerDetailView):
    """``GET`` (in ``views.py``) and ``PATCH`` of one ranker."""

    @extend_schema(
        summary="Replace a ranker's config (checked as on create; secrets stay masked)",
        request=RankerConfigSerializer,
        responses={200: RankerSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
        examples=[OpenApiExample("An Elasticsearch ranker", value={"config": ES_EXAMPLE}, request_only=True)],
    )
    def patch(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        serializer = RankerConfigSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            ranker = ranker_config_update(ranker=ranker, config=serializer.validated_data["config"])
        except DjangoValidationError as exc:  # one message per config key, as on create
            raise ValidationError({"config": exc.message_dict}) from None
        return Response(RankerSerializer(ranker).data)


class RankerTryView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = TrySerializer

    @extend_schema(
        summary="Rank one question with the ranker and show the mapped result, or exactly what failed",
        description="Nothing is stored. A ranker that fails still answers 200, with `ok` false and `error` "
        "saying what failed (for engine rankers: the mapping path and the engine's own message).",
        request=TrySerializer,
        responses={200: TryResultSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
        examples=[
            OpenApiExample(
                "A question", value={"question": "what is a boundary layer?", "rows": 5}, request_only=True
            )
        ],
    )
    def post(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        serializer = TrySerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        rows = serializer.validated_data.get("rows") or min(ranker.collection.ndcg_k, MAX_ROWS)
        result = ranker_try(ranker=ranker, question=serializer.validated_data["question"], rows=rows)
        return Response(try_result_data(result))
