"""A version's online test (``/api/rankers/{id}/versions/{id}/online-test/``): read its figures and verdict,
start one against the champion (``ranker_server`` interleaves it), stop it (issue 36 §2); and every online
test it ran, latest first (``.../online-tests/``)."""

from __future__ import annotations

import math
from typing import Any

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import ranker_for
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.models import Role
from evaluation.selectors.online import latest_online_test, online_test_result, version_online_tests
from rankers.models import OnlineTest, Ranker, RankerVersion
from rankers.online_tests import SERVED_BY_RANKER_SERVER, SERVING_CHOICES, online_test_start, online_test_stop
from trainer.selectors import versions_of

# --- what the caller sends ---------------------------------------------------------------------------


class OnlineTestStartSerializer(serializers.Serializer):
    share = serializers.IntegerField(
        min_value=0, max_value=100, default=100, help_text="Percent of the live queries interleaved."
    )
    max_queries = serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        default=None,
        help_text="The stop rule: stop after this many interleaved queries (null: no budget).",
    )
    stop_on_verdict = serializers.BooleanField(
        default=True, help_text="The stop rule: stop once the verdict is better, worse or within noise."
    )
    serving = serializers.ChoiceField(
        choices=SERVING_CHOICES,
        default=SERVED_BY_RANKER_SERVER,
        help_text="Who serves the versions: ranker_server (interleaved), or engine (an exported model: "
        "refused with the way to compare it from the logs instead).",
    )


# --- what it answers ---------------------------------------------------------------------------------


class OnlineTestSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    state = serializers.CharField(help_text="running or stopped")
    champion = serializers.CharField()
    challenger = serializers.CharField()
    share = serializers.IntegerField()
    max_queries = serializers.IntegerField(allow_null=True)
    stop_on_verdict = serializers.BooleanField()
    started_by = serializers.CharField(allow_null=True)
    started_at = serializers.DateTimeField()
    stopped_at = serializers.DateTimeField(allow_null=True)
    stop_reason = serializers.CharField()
    impressions = serializers.IntegerField(help_text="Interleaved queries served.")
    queries_with_clicks = serializers.IntegerField(help_text="Those whose clicks credit a team.")
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    delta = serializers.FloatField(
        allow_null=True, help_text="(wins + ½ ties) / (wins + losses + ties) − ½, the challenger's side."
    )
    ci_low = serializers.FloatField(allow_null=True, help_text="The always-valid 95% interval of delta.")
    ci_high = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(help_text="The always-valid p-value (mixture SPRT).")
    verdict = serializers.CharField(
        help_text="challenger better, challenger worse, within noise, or keep going"
    )
    more_queries = serializers.IntegerField(allow_null=True, help_text="keep going: about this many more.")
    stop_due = serializers.CharField(
        help_text="Why the stop rule will stop the running test at beat's next run."
    )


def _number(value: float) -> float | None:
    return None if math.isnan(value) else round(value, 6)


def online_test_json(version: RankerVersion) -> dict[str, Any]:
    test = latest_online_test(version=version)
    if test is None:
        raise NotFound(f"Version {version.pk} has no online test.")
    return test_json(test)


def test_json(test: OnlineTest) -> dict[str, Any]:
    result = online_test_result(test=test)
    c, v = result.counts, result.verdict
    return {
        "id": test.pk,
        "state": test.state,
        "champion": test.champion.label,
        "challenger": test.challenger.label,
        "share": test.share,
        "max_queries": test.max_queries,
        "stop_on_verdict": test.stop_on_verdict,
        "started_by": test.started_by.username if test.started_by else None,
        "started_at": test.started_at,
        "stopped_at": test.stopped_at,
        "stop_reason": test.stop_reason,
        "impressions": c.impressions,
        "queries_with_clicks": c.queries_with_clicks,
        "wins": c.wins,
        "losses": c.losses,
        "ties": c.ties,
        "delta": _number(v.delta),
        "ci_low": _number(v.low),
        "ci_high": _number(v.high),
        "p_value": round(v.p_value, 6),
        "verdict": v.verdict,
        "more_queries": v.more_queries,
        "stop_due": result.stop_due,
    }


def _version(ranker: Ranker, version_id: int) -> RankerVersion:
    version = versions_of(ranker=ranker).select_related("ranker__collection").filter(pk=version_id).first()
    if version is None:
        raise NotFound(f"Ranker {ranker.pk} has no version {version_id}.")
    return version


# --- views -------------------------------------------------------------------------------------------


class OnlineTestView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = OnlineTestStartSerializer

    @extend_schema(
        summary="The version's latest online test: its counts, delta with its interval, and the verdict",
        responses={200: OnlineTestSerializer, **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, ranker_id: int, version_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id)
        return Response(OnlineTestSerializer(online_test_json(_version(ranker, version_id))).data)

    @extend_schema(
        summary="Start an online test of the version against the champion (ranker_server interleaves it)",
        request=OnlineTestStartSerializer,
        responses={201: OnlineTestSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def post(self, request: Request, ranker_id: int, version_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        version = _version(ranker, version_id)
        serializer = OnlineTestStartSerializer(data=request.data or {})
        serializer.is_valid(raise_exception=True)
        online_test_start(challenger=version, started_by=request.user, **serializer.validated_data)
        return Response(OnlineTestSerializer(online_test_json(version)).data, status=201)


class OnlineTestStopView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = OnlineTestSerializer

    @extend_schema(
        summary="Stop the version's running online test",
        request=None,
        responses={200: OnlineTestSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def post(self, request: Request, ranker_id: int, version_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        version = _version(ranker, version_id)
        test = latest_online_test(version=version)
        if test is None:
            raise NotFound(f"Version {version.pk} has no online test.")
        online_test_stop(test=test, stopped_by=request.user)
        return Response(OnlineTestSerializer(online_test_json(version)).data)


class OnlineTestListView(GenericAPIView):
    serializer_class = OnlineTestSerializer
    pagination_class = None  # a version's tests: a handful, all at once

    @extend_schema(
        summary="Every online test of the version against the champion, latest first, each with its counts, "
        "delta with its interval, verdict and how it ended",
        responses={200: OnlineTestSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, ranker_id: int, version_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id)
        version = _version(ranker, version_id)
        tests = [test_json(test) for test in version_online_tests(version=version)]
        return Response(OnlineTestSerializer(tests, many=True).data)
