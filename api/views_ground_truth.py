"""``GET /api/collections/{slug}/ground-truth/``: the labels to train on, as JSON or a file (JSON lines,
R&R CSV, TREC qrels); test labels for trainers only."""

from __future__ import annotations

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import collection_for
from api.negotiation import IgnoreFormatParameter
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.formats.writers import WRITERS
from corpus.models import Split
from corpus.permissions import can_see_labels
from ratings.exports import ground_truth_file
from ratings.selectors import ground_truth_rows


class GroundTruthRowSerializer(serializers.Serializer):
    question_id = serializers.CharField()
    question = serializers.CharField()
    split = serializers.CharField()
    answer_id = serializers.CharField()
    stars = serializers.IntegerField(help_text="The pair's gain label (0–3).")
    rater_count = serializers.IntegerField()
    disagreement = serializers.IntegerField(
        help_text="Highest minus lowest stars given; 2 or more: raters disagree."
    )
    judge_count = serializers.IntegerField(
        help_text="How many of the rater_count ratings came from judges (models a trainer trusts)."
    )

    def to_representation(self, row):
        return row.as_dict()


# --- views -------------------------------------------------------------------------------------------


class GroundTruthView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    content_negotiation_class = IgnoreFormatParameter
    renderer_classes = [JSONRenderer]
    pagination_class = None

    @extend_schema(
        summary="Labels to train on (default: the training split, as JSON)",
        description="`split=test` and `split=all` need the trainer role: test labels are what evaluations "
        "score rankers on, so a ranker service must not train on them. Formats: `json` (a list of objects), "
        "`jsonl`, `rnr-csv` (Retrieve and Rank ground truth: question, then answer id and stars pairs; "
        "import it with `--grade-map identity`), `trec-qrels` (`qid 0 docid stars`).",
        parameters=[
            OpenApiParameter("format", str, enum=["json", "jsonl", "rnr-csv", "trec-qrels"], required=False),
            OpenApiParameter("split", str, enum=["train", "test", "all"], required=False),
        ],
        responses={
            (200, "application/json"): GroundTruthRowSerializer(many=True),
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "text/plain"): OpenApiTypes.STR,
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
        },
    )
    def get(self, request: Request, slug: str) -> Response | HttpResponse:
        collection, role = collection_for(request, slug)
        fmt = request.query_params.get("format", "json")
        split = request.query_params.get("split", Split.TRAIN)
        errors = {}
        if fmt not in {"json", *WRITERS}:
            errors["format"] = [f"format must be json, jsonl, rnr-csv or trec-qrels, not {fmt!r}."]
        if split not in {Split.TRAIN, Split.TEST, "all"}:
            errors["split"] = [f"split must be train, test or all, not {split!r}."]
        if errors:
            raise ValidationError(errors)
        if not can_see_labels(role=role, split=split):
            raise PermissionDenied(
                f"split={split} needs the trainer role: rankers must not train on test labels."
            )
        if fmt == "json":
            rows = ground_truth_rows(collection=collection, split=split)
            return Response(GroundTruthRowSerializer(list(rows), many=True).data)
        file = ground_truth_file(collection=collection, fmt=fmt, split=split)  # the export page's bytes
        response = HttpResponse(file.text, content_type=f"{file.content_type}; charset=utf-8")
        response["Content-Disposition"] = f'attachment; filename="{file.filename}"'
        return response
