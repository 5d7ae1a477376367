"""Files through the API: an evaluation run's files, and the ratings with their notes (imports are in
:mod:`api.views_imports`)."""

from __future__ import annotations

import io

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request

from api.access import caller_role, collection_for
from api.negotiation import IgnoreFormatParameter
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.models import Role, Split
from evaluation.exports import RUN_EXPORTS, write_run_export
from evaluation.selectors import run_detail, run_export_rows
from ratings.exports import RATING_EXPORTS, ratings_file


def _file_response(text: str, content_type: str, filename: str) -> HttpResponse:
    response = HttpResponse(text, content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


class EvaluationExportView(GenericAPIView):
    content_negotiation_class = IgnoreFormatParameter
    renderer_classes = [JSONRenderer]
    pagination_class = None

    @extend_schema(
        summary="An evaluation run as a file: TREC run, or per-question results as CSV or JSONL",
        description="`trec-run`: `qid Q0 docid rank score tag` per ranked answer, for `trec_eval` and "
        "`manage.py score` (runs keep the order, not the ranker's scores: score = n − rank + 1). `csv` and "
        "`jsonl`: one row per question with the per-question fields of the evaluation detail. Trainers "
        "only, like the run page: the results carry test labels.",
        parameters=[OpenApiParameter("format", str, enum=list(RUN_EXPORTS), required=False)],
        responses={
            (200, "text/plain"): OpenApiTypes.STR,
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
        },
    )
    def get(self, request: Request, run_id: int) -> HttpResponse:
        run = run_detail(run_id=run_id)
        if run is None or caller_role(request, run.collection) is None:
            raise NotFound(f"No evaluation {run_id} that you can see.")
        collection_for(request, run.collection.slug, need=Role.TRAINER)
        fmt = request.query_params.get("format", "trec-run")
        if fmt not in RUN_EXPORTS:
            raise ValidationError({"format": [f"format must be trec-run, csv or jsonl, not {fmt!r}."]})
        out = io.StringIO()
        write_run_export(fmt, run_export_rows(run=run), out, run_id=run.pk)
        content_type, extension = RUN_EXPORTS[fmt]
        return _file_response(out.getvalue(), content_type, f"{run.collection.slug}-run-{run.pk}.{extension}")


class RatingsExportView(GenericAPIView):
    content_negotiation_class = IgnoreFormatParameter
    renderer_classes = [JSONRenderer]
    pagination_class = None

    @extend_schema(
        summary="Every rating with its rater and note, as CSV or JSONL",
        description="One row per rating (not per label): question, answer, rater, stars, source, the "
        "rater's note and when it last changed. Trainers only (it names the raters and holds test "
        "judgments).",
        parameters=[
            OpenApiParameter("format", str, enum=list(RATING_EXPORTS), required=False),
            OpenApiParameter("split", str, enum=["train", "test", "all"], required=False),
        ],
        responses={
            (200, "text/csv"): OpenApiTypes.STR,
            (200, "application/x-ndjson"): OpenApiTypes.STR,
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
        },
    )
    def get(self, request: Request, slug: str) -> HttpResponse:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        fmt = request.query_params.get("format", "csv")
        split = request.query_params.get("split", "all")
        errors = {}
        if fmt not in RATING_EXPORTS:
            errors["format"] = [f"format must be csv or jsonl, not {fmt!r}."]
        if split not in {Split.TRAIN, Split.TEST, "all"}:
            errors["split"] = [f"split must be train, test or all, not {split!r}."]
        if errors:
            raise ValidationError(errors)
        file = ratings_file(collection=collection, fmt=fmt, split=split)  # the export page's bytes
        return _file_response(file.text, file.content_type, file.filename)
