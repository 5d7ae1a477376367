"""A ranker's versions (``/api/rankers/{id}/versions/``): the list with their figures, announcing a newly
deployed model of an http ranker (its evaluation starts), and making a version the champion."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import ranker_for
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND, UNAVAILABLE
from api.version_shape import RankerVersionSerializer
from api.views_evaluations import EvaluationStartedSerializer, evaluation_started
from corpus.models import Role
from rankers.models import RankerVersion
from trainer.selectors import versions_of
from trainer.services import ranker_version_announce, version_promote_by_hand

# --- what the caller sends ---------------------------------------------------------------------------


class VersionAnnounceSerializer(serializers.Serializer):
    label = serializers.CharField(max_length=100, help_text="The deployed model's label, e.g. its build id.")
    notes = serializers.CharField(max_length=10_000, required=False, allow_blank=True, default="")


class PromoteSerializer(serializers.Serializer):
    reason = serializers.CharField(
        max_length=2000, required=False, allow_blank=True, default="", help_text="Why (kept in the history)."
    )
    confirm = serializers.BooleanField(
        required=False,
        default=True,
        help_text="true (the default, as before this field): promote even a version not measured better "
        "than the champion (the history says so). false: then refuse with 400 naming `confirm` and stating "
        "the measured difference, as the Promote button asks first.",
    )


# --- views -------------------------------------------------------------------------------------------


class RankerVersionCreateView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = VersionAnnounceSerializer

    @extend_schema(
        summary="The ranker's versions, newest first, with their figures and which one is champion",
        responses={200: RankerVersionSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id)
        page = self.paginate_queryset(versions_of(ranker=ranker).select_related("ranker"))
        return self.get_paginated_response(RankerVersionSerializer(page, many=True).data)

    @extend_schema(
        summary="Announce a newly deployed model of an http ranker; its evaluation starts",
        request=VersionAnnounceSerializer,
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
        serializer = VersionAnnounceSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        version, run = ranker_version_announce(
            ranker=ranker, created_by=request.user, **serializer.validated_data
        )
        return evaluation_started(request, run, version)


class VersionPromoteView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = PromoteSerializer

    @extend_schema(
        summary="Make a version the champion (promote a challenger, or roll back to an older version)",
        request=PromoteSerializer,
        responses={
            200: RankerVersionSerializer,
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
        },
    )
    def post(self, request: Request, ranker_id: int, version_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        version = versions_of(ranker=ranker).filter(pk=version_id).first()
        if version is None:
            raise NotFound(f"Ranker {ranker_id} has no version {version_id}.")
        serializer = PromoteSerializer(data=request.data or {})
        serializer.is_valid(raise_exception=True)
        version_promote_by_hand(
            version=version,
            changed_by=request.user,
            confirm=serializer.validated_data["confirm"],
            reason=serializer.validated_data["reason"],
        )
        version.refresh_from_db()
        return Response(
            RankerVersionSerializer(RankerVersion.objects.select_related("ranker").get(pk=version.pk)).data
        )
