"""``GET /api/collections/{slug}/queue/``: the next pairs the rating queue wants from the caller.

A thin view over ``raters.next_task.modes.mode_picks``, so an external rating tool or script can drive the
queue; ratings come back through ``POST /api/collections/{slug}/ratings/``. When the mode asked for wants
nothing (on a fresh demo, the champion and its challenger rank every test question alike), the response
says why (``reason``) and offers what the rating page would (``raters.next_task.picking``, the queue
behind ``next_task``), with ``answered_by: "queue"``, as the rating page goes on to the usual queue.
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
from raters.next_task.modes import MODE_DECIDE, MODES, mode_picks
from raters.next_task.picking import queue_pairs_with_reasons

N_MIN, N_MAX, N_DEFAULT = 1, 50, 10
# Who answered: the mode asked for, or (it wanting nothing) the rating page's usual queue.
ANSWERED_BY_QUEUE = "queue"
ANSWERED_BY = (*MODES, ANSWERED_BY_QUEUE)


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
    mode = serializers.ChoiceField(choices=list(MODES), help_text="The mode asked for.")
    answered_by = serializers.ChoiceField(
        choices=list(ANSWERED_BY),
        allow_null=True,
        help_text="Which gave the pairs: the mode asked for, or `queue` (what the rating page offers next) "
        "when the mode wanted nothing; null when neither has anything for the caller.",
    )
    reason = serializers.CharField(
        allow_null=True,
        help_text="Why the mode asked for found nothing, in a plain sentence; null when it answered.",
    )
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
        "a question they skipped. When the mode wants nothing, `reason` says why and the pairs are what the "
        "rating page would offer next (`answered_by: queue`). Rate them with "
        "`POST /api/collections/{slug}/ratings/`.",
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
        rater = request.user
        picks = mode_picks(
            collection=collection,
            rater=rater,  # type: ignore[arg-type]
            mode=mode,
            champion_id=ids["champion"],
            challenger_id=ids["challenger"],
        )
        pairs = [(p.question_id, p.answer_id, p.reason) for p in picks.pairs[:n]]
        answered_by: str | None = mode
        if not pairs:
            pairs = queue_pairs_with_reasons(collection=collection, rater=rater, limit=n)  # type: ignore[arg-type]
            answered_by = ANSWERED_BY_QUEUE if pairs else None
        questions = Question.objects.filter(collection=collection).in_bulk([q for q, _, _ in pairs])
        answers = Answer.objects.filter(collection=collection).in_bulk([a for _, a, _ in pairs])
        body: list[dict[str, Any]] = [
            {
                "question": {
                    "id": questions[q].external_id,
                    "text": questions[q].text,
                    "split": questions[q].split,
                },
                "answer": {
                    "id": answers[a].external_id,
                    "title": answers[a].title,
                    "body": answers[a].body,
                },
                "reason": reason,
            }
            for q, a, reason in pairs
        ]
        reason = picks.why_none or None
        if reason and answered_by is None:
            reason += " Nothing else is waiting for you in the rating page's queue either."
        return Response({"mode": mode, "answered_by": answered_by, "reason": reason, "pairs": body})
