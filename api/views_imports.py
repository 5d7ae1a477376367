"""Imports through the API: files imported into a collection (the same parsers and all-or-nothing service
as ``manage.py import_collection`` and the manage page), and the imports of judgments kept with their
option "answers not listed for a judged question are incorrect", which a trainer may change later."""

from __future__ import annotations

import tempfile
from pathlib import Path

from django.core.exceptions import ValidationError as DjangoValidationError
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import collection_for
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.formats.common import FormatError
from corpus.models import Collection, Role
from corpus.services import ImportFiles, parse_import_files
from ratings.models import UNLISTED_INCORRECT_LABEL
from ratings.selectors import ImportRow, ground_truth_imports
from ratings.services import ground_truth_import_set
from trainer.forms import ImportForm
from trainer.services import collection_import
from trainer.views import uploads_save

UNLISTED_INCORRECT_HELP = (
    f"{UNLISTED_INCORRECT_LABEL}: on, the training (its fit, its cross-validation, the exported tree model "
    "and the positive-only check) reads an answer the import does not list for one of its judged questions "
    "as 0 stars, as trec_eval reads TREC qrels; off, as unknown (a sample of judgments). It changes no "
    "rating."
)


class ImportCountsSerializer(serializers.Serializer):
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()


class ImportRecordSerializer(serializers.Serializer):
    """An import of judgments, as the manage page lists it."""

    id = serializers.IntegerField()
    name = serializers.CharField(help_text='How figures name it: "import 3 (qrels.test)".')
    files = serializers.CharField(help_text='Its files\' names, ", "-joined ("" before imports were kept).')
    created_at = serializers.DateTimeField()
    created_by = serializers.CharField(
        allow_null=True, help_text="The trainer; null for a command or the demo."
    )
    rater = serializers.CharField(help_text="The import rater whose ratings the judgments became.")
    judgments = serializers.IntegerField()
    questions = serializers.IntegerField(help_text="The questions it judged.")
    training_questions = serializers.IntegerField(help_text="...of them in the training split.")
    unlisted_incorrect = serializers.BooleanField(help_text=UNLISTED_INCORRECT_HELP)

    def to_representation(self, row: ImportRow) -> dict:
        record = row.record
        return {
            "id": record.pk,
            "name": record.name,
            "files": record.files,
            "created_at": serializers.DateTimeField().to_representation(record.created_at),
            "created_by": record.created_by.username if record.created_by else None,
            "rater": record.rater.username,
            "judgments": record.judgments,
            "questions": row.questions,
            "training_questions": row.training_questions,
            "unlisted_incorrect": record.unlisted_incorrect,
        }


class ImportSummarySerializer(serializers.Serializer):
    answers = ImportCountsSerializer()
    questions = ImportCountsSerializer()
    ratings = ImportCountsSerializer()
    summary = serializers.CharField(help_text="The same in words, as the manage page says it.")
    # The import kept with its option; null when the files held no judgments.
    ground_truth_import = ImportRecordSerializer(allow_null=True)


class ImportUploadSerializer(serializers.Serializer):
    """The files of one import (any subset, at least one), the grade map and the option, as multipart form
    data."""

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
    unlisted_incorrect = serializers.BooleanField(
        required=False, default=True, help_text=f"{UNLISTED_INCORRECT_HELP} Default: true."
    )


class ImportOptionSerializer(serializers.Serializer):
    unlisted_incorrect = serializers.BooleanField(help_text=UNLISTED_INCORRECT_HELP)


def _counts(summary) -> dict[str, int]:
    return {"created": summary.created, "updated": summary.updated, "unchanged": summary.unchanged}


class _UploadOption(serializers.Serializer):
    unlisted_incorrect = serializers.BooleanField(required=False, default=True)


def _unlisted_incorrect(data) -> bool:
    """The upload's option: absent is true (the manage page's unticked box is an explicit false)."""
    given = {"unlisted_incorrect": data["unlisted_incorrect"]} if "unlisted_incorrect" in data else {}
    option = _UploadOption(data=given)
    option.is_valid(raise_exception=True)
    return bool(option.validated_data["unlisted_incorrect"])


def _row(collection: Collection, import_id: int) -> ImportRow:
    rows = ground_truth_imports(collection=collection, import_id=import_id)
    if not rows:
        raise NotFound(f"No import {import_id} in collection {collection.slug!r}.")
    return rows[0]


class CollectionImportView(GenericAPIView):
    parser_classes = [MultiPartParser]
    serializer_class = ImportUploadSerializer
    pagination_class = None  # a collection has few imports: the list is whole

    @extend_schema(
        summary="The collection's imports of judgments, with their option",
        description="Oldest first. Trainers only, like the manage page.",
        responses={200: ImportRecordSerializer(many=True), **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        return Response(ImportRecordSerializer(ground_truth_imports(collection=collection), many=True).data)

    @extend_schema(
        summary="Import files into a collection (all or nothing)",
        description="Answers, questions and judgments from R&R, TREC, Quepid or Rated Ranking Evaluator "
        "files. Judgments become ratings by the import rater `ground-truth`, and the import is kept with "
        "`unlisted_incorrect` (default true: what trec_eval, R&R, Quepid and RRE assume). Every file is "
        "parsed before anything is written: a bad file is a 400 naming the form field, the file, the line "
        "and the problem, and nothing is imported.",
        request={"multipart/form-data": ImportUploadSerializer},
        responses={200: ImportSummarySerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        unlisted_incorrect = _unlisted_incorrect(request.data)
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
                    collection=collection,
                    answers=answers,
                    questions=questions,
                    judgments=judgments,
                    unlisted_incorrect=unlisted_incorrect,
                    files=[path.name for path in paths.values()],
                    created_by=request.user if request.user.is_authenticated else None,
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
        record = summary.ground_truth_import
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
                "ground_truth_import": None
                if record is None
                else ImportRecordSerializer(_row(collection, record.pk)).data,
            }
        )


class ImportDetailView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = ImportRecordSerializer

    @extend_schema(
        summary="One import of judgments, with its option",
        responses={200: ImportRecordSerializer, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str, import_id: int) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        return Response(ImportRecordSerializer(_row(collection, import_id)).data)

    @extend_schema(
        summary="Turn an import's \u201canswers not listed are incorrect\u201d on or off",
        description="The labels do not change; the next training, its cross-validation, the tree export's "
        "fit and the positive-only check read the new option. Trainers only.",
        request=ImportOptionSerializer,
        responses={200: ImportRecordSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def patch(self, request: Request, slug: str, import_id: int) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        row = _row(collection, import_id)
        serializer = ImportOptionSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        ground_truth_import_set(
            record=row.record, unlisted_incorrect=serializer.validated_data["unlisted_incorrect"]
        )
        return Response(ImportRecordSerializer(_row(collection, import_id)).data)
