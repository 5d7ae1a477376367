"""``POST /api/collections/{slug}/ratings/``: rate answers as the signed-in or token user (one rating or
a list; all or nothing), through the same save as the rating page (``ratings.services.ratings_record``).
The hot path of a service posting ratings."""

from __future__ import annotations

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import collection_for
from api.bulk import ONE_OR_LIST, validated_items
from api.fields import external_id_field
from api.responses import AUTH_ERRORS, BUSY, INVALID, NOT_FOUND
from corpus.permissions import can_see_labels
from corpus.selectors import questions_and_answers
from ratings.models import NOTE_MAX_LENGTH, RatingSource
from ratings.services import ratings_record, validate_stars

# --- what the caller sends ---------------------------------------------------------------------------


@extend_schema_field({"type": "integer", "minimum": 0, "maximum": 3})
class StarsField(serializers.Field):
    """0–3 stars, checked by ratings.services.validate_stars: the same rule and message as the web UI."""

    def to_internal_value(self, data):
        try:
            return validate_stars(data)
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.message_dict["stars"]) from None

    def to_representation(self, value):
        return value


class RatingSerializer(serializers.Serializer):
    question_id = external_id_field()
    answer_id = external_id_field()
    stars = StarsField(help_text="0 incorrect, 1 right topic, 2 good, 3 perfect.")
    note = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=NOTE_MAX_LENGTH,
        help_text='Optional remark on the rating (at most 500 characters); "" clears it, leaving the '
        "field out keeps the note the rating has.",
    )


# --- what comes back ---------------------------------------------------------------------------------


class RecordedRatingSerializer(serializers.Serializer):
    question_id = serializers.CharField()
    answer_id = serializers.CharField()
    stars = serializers.IntegerField()
    note = serializers.CharField(help_text='The rating\'s note now ("" when none).')
    label = serializers.IntegerField(
        allow_null=True,
        help_text="The pair's gain label now: the median of its raters' stars. Null for a rater's rating "
        "of a test question: raters never see test labels.",
    )
    rater_count = serializers.IntegerField()


class RatingsResultSerializer(serializers.Serializer):
    recorded = serializers.IntegerField()
    ratings = RecordedRatingSerializer(many=True)


# --- views -------------------------------------------------------------------------------------------


class RatingCreateView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = RatingSerializer
    # The hot path: a valid token's invalid-token budget is read in the throttle's round trip.
    token_budget_in_throttle = True

    @extend_schema(
        summary="Rate answers (one rating or a list; all or nothing), as the signed-in or token user",
        request=RatingSerializer(many=True),
        extensions=ONE_OR_LIST,
        responses={201: RatingsResultSerializer, **INVALID, **AUTH_ERRORS, **NOT_FOUND, **BUSY},
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, role = collection_for(request, slug)
        items = validated_items(
            RatingSerializer, request.data, "rating", unique=lambda i: (i["question_id"], i["answer_id"])
        )
        questions, answers = questions_and_answers(
            collection=collection,
            question_ids=[i["question_id"] for i in items],
            answer_ids=[i["answer_id"] for i in items],
        )
        errors = {}
        for n, item in enumerate(items):
            error = {}
            if item["question_id"] not in questions:
                error["question_id"] = [
                    f"No question {item['question_id']!r} in collection {collection.slug!r}."
                ]
            if item["answer_id"] not in answers:
                error["answer_id"] = [f"No answer {item['answer_id']!r} in collection {collection.slug!r}."]
            if error:
                errors[str(n)] = error
        if errors:
            raise ValidationError(errors)
        stored = ratings_record(
            rater=request.user,
            ratings=[(questions[i["question_id"]], answers[i["answer_id"]], i["stars"]) for i in items],
            source=RatingSource.API,
            notes=[i.get("note") for i in items],
        )
        # Each rating's label as its save left it (in a list, a later rating of the same pair can't follow:
        # repeated pairs are refused above); the save computed it, so it is not read again.
        recorded = []
        for item, rating in zip(items, stored, strict=True):
            question = questions[item["question_id"]]
            gain, rater_count = rating.saved_label or (None, 0)
            # The label includes the other raters' stars: a rater rating a test question doesn't see it.
            shown = gain if can_see_labels(role=role, split=question.split) else None
            recorded.append({**item, "note": rating.note, "label": shown, "rater_count": rater_count})
        return Response({"recorded": len(recorded), "ratings": recorded}, status=status.HTTP_201_CREATED)
