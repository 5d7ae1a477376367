"""Files through the API: import ratings and collections (the same parsers and all-or-nothing service as
``manage.py import_collection`` and the manage page), an evaluation run's files, and the ratings with
their notes."""

from __future__ import annotations

import io
import tempfile
from pathlib import Path

from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import MultiPartParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import caller_role, collection_for
from api.negotiation import IgnoreFormatParameter
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.formats.common import FormatError
from corpus.models import Role, Split
from corpus.services import ImportFiles, parse_import_files
from evaluation.exports import RUN_EXPORTS, write_run_export
from evaluation.selectors import run_detail, run_export_rows
from ratings.exports import RATING_EXPORTS, ratings_file
from trainer.forms import ImportForm
from trainer.services import collection_import
from trainer.views import uploads_save


class ImportCountsSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class ImportSummarySerializer(serializers.Serializer):
    answers = ImportCountsSerializer()
    questions = ImportCountsSerializer()
    ratings = ImportCountsSerializer()
    summary = serializers.CharField(help_text="The same in words, as the manage page says it.")


class ImportUploadSerializer(serializers.Serializer):
    """The files of one import (any subset, at least one) and the grade map, as multipart form data."""

    rnr_documents = serializers.FileField(required=False, help_text="R&R documents (Solr bulk-add JSON)")
    rnr_ground_truth = serializers.FileField(required=False, help_text="R&R ground truth (CSV)")
    corpus = serializers.FileField(required=False, help_text="TREC corpus (JSONL: id, title, text)")
    topics = serializers.FileField(required=False, help_text="TREC topics (TSV: qid, text[, train|test])")
    qrels = serializers.FileField(required=False, help_text="TREC qrels (qid 0 docid grade)")
    quepid_csv = serializers.FileField(
        required=False, help_text="Quepid ratings of a case or a snapshot (CSV: query,docid,rating)"
    )
    rre_json = serializers.FileField(required=False, help_text="Rated Ranking Evaluator ratings (JSON)")
    grade_map = serializers.CharField(
        required=False,
        help_text='"rnr", "identity" or pairs like "4:3,3:2,2:1,1:0,0:0"; empty: "rnr" for R&R CSV, '
        '"identity" for qrels, Quepid and RRE.',
    )


def _counts(summary) -> dict[str, int]:
    return {"created": summary.created, "updated": summary.updated, "unchanged": summary.unchanged}


class CollectionImportView(GenericAPIView):
    parser_classes = [MultiPartParser]
    serializer_class = ImportUploadSerializer

    @extend_schema(
        summary="Import files into a collection (all or nothing)",
        description="Answers, questions and judgments from R&R, TREC, Quepid or Rated Ranking Evaluator "
        "files. Judgments become ratings by the import rater `ground-truth`. Every file is parsed before "
        "anything is written: a bad file is a 400 naming the form field, the file, the line and the "
        "problem, and nothing is imported.",
        request={"multipart/form-data": ImportUploadSerializer},
        responses={200: ImportSummarySerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        form = ImportForm(request.data, request.FILES)
        if not form.is_valid():
            raise ValidationError(
                {
                    ("non_field_errors" if field == "__all__" else field): list(errors)
                    for field, errors in form.errors.items()
                }
            )
        with tempfile.TemporaryDirectory() as folder:
            paths = uploads_save(form.cleaned_data, Path(folder))
            field_of = {path.name: field for field, path in paths.items()}
            try:
                answers, questions, judgments = parse_import_files(
                    ImportFiles(**paths, grade_map=form.cleaned_data["grade_map"] or None)
                )
                summary = collection_import(
                    collection=collection, answers=answers, questions=questions, judgments=judgments
                )
            except FormatError as exc:
                raise ValidationError(
                    {field_of.get(exc.file, "non_field_errors"): [f"{exc}. Nothing was imported."]}
                ) from None
            except ValueError as exc:  # a bad grade map
                raise ValidationError({"grade_map": [f"{exc}. Nothing was imported."]}) from None
            except DjangoValidationError as exc:
                raise ValidationError(
                    {"non_field_errors": [f"{'; '.join(exc.messages)}. Nothing was imported."]}
                ) from None
        return Response(
            {
                "answers": _counts(summary.answers),
                "questions": _counts(summary.questions),
                "ratings": {
                    "created": summary.ratings_created,
                    "updated": summary.ratings_updated,
                    "unchanged": summary.ratings_unchanged,
                },
                "summary": str(summary),
            }
        )


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
