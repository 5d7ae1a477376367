"""The REST API: thin views over the same services and selectors the web pages use.

Authentication: the browser's session, or ``Authorization: Token <key>`` (``authentication.py``).
Authorization: ``access.py``. Errors: ``exceptions.py``. Every response code is in the OpenAPI schema
(``/api/schema/``, browsable at ``/api/docs/``).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from typing import Any

from django.db import transaction
from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import JSONParser
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from corpus.formats import WRITERS, AnswerRecord, QuestionRecord
from corpus.models import Answer, Collection, Membership, Question, Role, Split
from corpus.permissions import can_create_collections, can_see_labels
from corpus.selectors import collections_for_user, questions_and_answers
from corpus.services import answers_upsert, collection_create, questions_upsert
from evaluation.models import RunTrigger
from evaluation.selectors import question_results, run_detail, runs_for_ranker, unknown_ids
from evaluation.services import evaluation_start
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.selectors import ranking_version
from rankers.services import ranker_create, version_promote
from ratings.models import Label, RatingSource
from ratings.selectors import ground_truth_rows
from ratings.services import ratings_record
from trainer.api import serializers as s
from trainer.api.access import caller_role, collection_for, ranker_for, token_of
from trainer.api.schema import ONE_OR_LIST_MARK
from trainer.models import Training
from trainer.selectors import tokens_of, versions_of
from trainer.services import (
    TrainingConflict,
    TrainingRefused,
    TrainingUnavailable,
    api_token_revoke_own,
    ranker_version_announce,
    training_start,
)

# Response codes every authenticated endpoint can give, documented once.
AUTH_ERRORS = {
    401: OpenApiResponse(s.ErrorSerializer, description="No credentials, or a wrong or revoked token."),
    429: OpenApiResponse(
        s.ErrorSerializer, description="Too many requests; retry after the Retry-After header."
    ),
}
NOT_FOUND = {
    404: OpenApiResponse(s.ErrorSerializer, description="No such object that you can see, or no such page.")
}
FORBIDDEN = {403: OpenApiResponse(s.ErrorSerializer, description="Your role (or the token's) is not enough.")}
INVALID = {400: OpenApiResponse(s.ValidationErrorSerializer, description="Bad input: messages per field.")}
BUSY = {
    503: OpenApiResponse(
        s.ErrorSerializer,
        description="Other writes of the same pairs kept conflicting; nothing was stored. "
        "Retry after the Retry-After header.",
    )
}
UNAVAILABLE = {
    503: OpenApiResponse(s.ErrorSerializer, description="The task queue is unreachable; nothing was stored.")
}


# The body is one object or a list of them: trainer.api.schema turns the list schema into a oneOf.
ONE_OR_LIST = {ONE_OR_LIST_MARK: s.MAX_BULK}


def _items(data: Any, what: str) -> list:
    """A request body that is one object or a list of them, as a list (400 otherwise)."""
    if isinstance(data, dict):
        return [data]
    if isinstance(data, list):
        if not data:
            raise ValidationError({"non_field_errors": [f"Send at least one {what}."]})
        if len(data) > s.MAX_BULK:
            raise ValidationError({"non_field_errors": [f"Send at most {s.MAX_BULK} {what}s per request."]})
        return data
    raise ValidationError({"non_field_errors": [f"Send a {what} object or a list of them."]})


def _validated_items(serializer_class, data: Any, what: str, *, unique: Callable[[dict], Any]) -> list[dict]:
    """Validate each item; errors are keyed by item index. Repeated keys (``unique``) are errors too."""
    items = _items(data, what)
    serializer = serializer_class(data=items, many=True)
    if not serializer.is_valid():
        errors = serializer.errors
        # DRF reports a list body's errors as a list, or (newer versions) a dict keyed by item index.
        pairs = errors.items() if isinstance(errors, dict) else enumerate(errors)
        raise ValidationError({str(i): error for i, error in pairs if error})
    seen: dict[Any, int] = {}
    errors = {}
    for i, item in enumerate(serializer.validated_data):
        key = unique(item)
        if key in seen:
            errors[str(i)] = {"id": [f"{what} {key!r} appears twice (also item {seen[key]})."]}
        seen.setdefault(key, i)
    if errors:
        raise ValidationError(errors)
    return serializer.validated_data


def _with_counts(collections: QuerySet[Collection]) -> QuerySet[Collection]:
    def count(queryset) -> Coalesce:
        return Coalesce(
            Subquery(queryset.order_by().values("collection_id").annotate(n=Count("pk")).values("n")[:1]),
            0,
            output_field=IntegerField(),
        )

    labels = (
        Label.objects.filter(question__collection_id=OuterRef("pk"))
        .order_by()
        .values("question__collection_id")
        .annotate(n=Count("pk"))
        .values("n")[:1]
    )
    return collections.annotate(
        answer_count=count(Answer.objects.filter(collection_id=OuterRef("pk"))),
        train_question_count=count(Question.objects.filter(collection_id=OuterRef("pk"), split=Split.TRAIN)),
        test_question_count=count(Question.objects.filter(collection_id=OuterRef("pk"), split=Split.TEST)),
        label_count=Coalesce(Subquery(labels), 0, output_field=IntegerField()),
    )


def _visible_collections(request: Request) -> tuple[QuerySet[Collection], dict[int, str]]:
    """Collections the caller may see, and the caller's role in each."""
    token = token_of(request)
    if token is not None:
        role = caller_role(request, token.collection)
        ids = [token.collection_id] if role else []
        return Collection.objects.filter(pk__in=ids), ({token.collection_id: role} if role else {})
    collections = collections_for_user(user=request.user)
    if request.user.is_superuser:
        return collections, {pk: Role.TRAINER for pk in collections.values_list("pk", flat=True)}
    roles = dict(Membership.objects.filter(user=request.user).values_list("collection_id", "role"))
    return collections, roles


# --- collections -------------------------------------------------------------------------------------


class CollectionListView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.CollectionSerializer

    @extend_schema(
        summary="Collections you can see",
        responses={200: s.CollectionSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request) -> Response:
        collections, roles = _visible_collections(request)
        page = self.paginate_queryset(_with_counts(collections).order_by("name", "pk"))
        return self.get_paginated_response(
            s.CollectionSerializer(page, many=True, context={"roles": roles}).data
        )

    @extend_schema(
        summary="Create a collection (you become its trainer)",
        request=s.CollectionCreateSerializer,
        responses={201: s.CollectionSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN},
    )
    def post(self, request: Request) -> Response:
        if token_of(request) is not None:
            raise PermissionDenied("A token works in its one collection; sign in to create collections.")
        if not can_create_collections(user=request.user):
            raise PermissionDenied("Only staff and trainers of a collection may create collections.")
        serializer = s.CollectionCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        slug = data.pop("slug", "")
        if slug and Collection.objects.filter(slug=slug).exists():
            raise ValidationError({"slug": [f"A collection with slug {slug!r} already exists."]})
        collection = collection_create(created_by=request.user, slug=slug, **data)
        collection = _with_counts(Collection.objects.filter(pk=collection.pk)).get()
        body = s.CollectionSerializer(collection, context={"roles": {collection.pk: Role.TRAINER}}).data
        return Response(body, status=status.HTTP_201_CREATED)


class CollectionDetailView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.CollectionSerializer

    @extend_schema(
        summary="One collection", responses={200: s.CollectionSerializer, **AUTH_ERRORS, **NOT_FOUND}
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, role = collection_for(request, slug)
        collection = _with_counts(Collection.objects.filter(pk=collection.pk)).get()
        return Response(s.CollectionSerializer(collection, context={"roles": {collection.pk: role}}).data)


SPLIT_PARAM = OpenApiParameter(
    "split", str, enum=["train", "test"], required=False, description="Only this split."
)


class QuestionListView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.QuestionSerializer

    @extend_schema(
        summary="Questions of a collection",
        parameters=[SPLIT_PARAM],
        responses={200: s.QuestionSerializer(many=True), **INVALID, **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug)
        questions = Question.objects.filter(collection=collection).order_by("pk")
        split = request.query_params.get("split")
        if split is not None:
            if split not in Split.values:
                raise ValidationError({"split": [f"split must be train or test, not {split!r}."]})
            questions = questions.filter(split=split)
        page = self.paginate_queryset(questions)
        return self.get_paginated_response(s.QuestionSerializer(page, many=True).data)

    @extend_schema(
        summary="Create or update questions by id (one object or a list; all or nothing)",
        request=s.QuestionSerializer(many=True),
        extensions=ONE_OR_LIST,
        responses={200: s.UpsertSummarySerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
        examples=[
            OpenApiExample(
                "One question",
                value={"id": "q3", "text": "heat transfer at hypersonic speed"},
                request_only=True,
            ),
            OpenApiExample(
                "Two questions",
                value=[
                    {"id": "q1", "text": "what is a boundary layer?"},
                    {"id": "q2", "text": "shock waves", "split": "test"},
                ],
                request_only=True,
            ),
        ],
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        items = _validated_items(s.QuestionSerializer, request.data, "question", unique=lambda i: i["id"])
        records = [QuestionRecord(i["id"], i["text"], i.get("split")) for i in items]
        with transaction.atomic():
            summary = questions_upsert(collection=collection, records=records)
        return Response(s.UpsertSummarySerializer(summary).data)


class AnswerListView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.AnswerSerializer

    @extend_schema(
        summary="Answers of a collection",
        responses={200: s.AnswerSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug)
        page = self.paginate_queryset(Answer.objects.filter(collection=collection).order_by("pk"))
        return self.get_paginated_response(s.AnswerSerializer(page, many=True).data)

    @extend_schema(
        summary="Create or update answers by id (one object or a list; all or nothing)",
        request=s.AnswerSerializer(many=True),
        extensions=ONE_OR_LIST,
        responses={200: s.UpsertSummarySerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        items = _validated_items(s.AnswerSerializer, request.data, "answer", unique=lambda i: i["id"])
        records = [AnswerRecord(i["id"], i["title"], i["body"], i["metadata"]) for i in items]
        with transaction.atomic():
            summary = answers_upsert(collection=collection, records=records)
        return Response(s.UpsertSummarySerializer(summary).data)


class RatingCreateView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.RatingSerializer
    # The hot path: a valid token's invalid-token budget is read in the throttle's round trip.
    token_budget_in_throttle = True

    @extend_schema(
        summary="Rate answers (one rating or a list; all or nothing), as the signed-in or token user",
        request=s.RatingSerializer(many=True),
        extensions=ONE_OR_LIST,
        responses={201: s.RatingsResultSerializer, **INVALID, **AUTH_ERRORS, **NOT_FOUND, **BUSY},
    )
    def post(self, request: Request, slug: str) -> Response:
        collection, role = collection_for(request, slug)
        items = _validated_items(
            s.RatingSerializer, request.data, "rating", unique=lambda i: (i["question_id"], i["answer_id"])
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


class IgnoreFormatParameter(DefaultContentNegotiation):
    """``?format=`` names the export format here, not a DRF renderer; always answer JSON or the export."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


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
            (200, "application/json"): s.GroundTruthRowSerializer(many=True),
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
        rows = ground_truth_rows(collection=collection, split=split)
        if fmt == "json":
            return Response(s.GroundTruthRowSerializer(list(rows), many=True).data)
        out = io.StringIO()
        WRITERS[fmt](rows, out)
        content_type = {"rnr-csv": "text/csv", "trec-qrels": "text/plain", "jsonl": "application/x-ndjson"}[
            fmt
        ]
        response = HttpResponse(out.getvalue(), content_type=f"{content_type}; charset=utf-8")
        extension = {"rnr-csv": "csv", "trec-qrels": "qrels", "jsonl": "jsonl"}[fmt]
        response["Content-Disposition"] = f'attachment; filename="{collection.slug}-{split}.{extension}"'
        return response


# --- rankers -------------------------------------------------------------------------------------------


def _rankers(request: Request) -> QuerySet[Ranker]:
    collections, roles = _visible_collections(request)
    return (
        Ranker.objects.filter(collection_id__in=list(roles))
        .select_related("collection")
        .prefetch_related("versions")
        .order_by("collection__slug", "name", "pk")
    )


class RankerListView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.RankerSerializer

    @extend_schema(
        summary="Rankers of the collections you can see",
        parameters=[
            OpenApiParameter("collection", str, required=False, description="Only this collection's.")
        ],
        responses={200: s.RankerSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request) -> Response:
        rankers = _rankers(request)
        if "collection" in request.query_params:
            rankers = rankers.filter(collection__slug=request.query_params["collection"])
        page = self.paginate_queryset(rankers)
        return self.get_paginated_response(s.RankerSerializer(page, many=True).data)

    @extend_schema(
        summary="Create a ranker (config is checked)",
        request=s.RankerSerializer,
        responses={201: s.RankerSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN},
        examples=[
            OpenApiExample(
                "An HTTP ranker",
                value={
                    "collection": "cranfield",
                    "name": "My service",
                    "kind": "http",
                    "config": {"url": "http://127.0.0.1:8077/", "timeout": 5, "retries": 2},
                },
                request_only=True,
            )
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = s.RankerSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        collection = Collection.objects.filter(slug=data["collection"]).first()
        role = caller_role(request, collection) if collection is not None else None
        if collection is None or role is None:
            raise ValidationError({"collection": [f"No collection {data['collection']!r} that you can see."]})
        if role != Role.TRAINER:
            raise PermissionDenied(
                f"Creating rankers needs the trainer role in collection {collection.slug!r}."
            )
        ranker = ranker_create(
            collection=collection,
            name=data["name"],
            kind=data["kind"],
            config=data["config"],
            is_default=data["is_default"],
        )
        return Response(s.RankerSerializer(ranker).data, status=status.HTTP_201_CREATED)


class RankerDetailView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.RankerSerializer

    @extend_schema(
        summary="One ranker with its versions",
        responses={200: s.RankerSerializer, **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id)
        return Response(s.RankerSerializer(ranker).data)


def _started(request: Request, run, version: RankerVersion | None = None) -> Response:
    body: dict[str, Any] = {"evaluation": s.EvaluationRunSerializer(run, context={"request": request}).data}
    if version is not None:
        body["version"] = s.RankerVersionSerializer(version).data
    return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["evaluation"]["url"]})


class RankerVersionCreateView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.VersionAnnounceSerializer

    @extend_schema(
        summary="The ranker's versions, newest first, with their figures and which one is champion",
        responses={200: s.RankerVersionSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id)
        page = self.paginate_queryset(versions_of(ranker=ranker).select_related("ranker"))
        return self.get_paginated_response(s.RankerVersionSerializer(page, many=True).data)

    @extend_schema(
        summary="Announce a newly deployed model of an http ranker; its evaluation starts",
        request=s.VersionAnnounceSerializer,
        responses={
            202: OpenApiResponse(
                s.EvaluationStartedSerializer, description="Evaluation queued; see Location."
            ),
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
            **UNAVAILABLE,
        },
    )
    def post(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        serializer = s.VersionAnnounceSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        version, run = ranker_version_announce(
            ranker=ranker, created_by=request.user, **serializer.validated_data
        )
        return _started(request, run, version)


class RankerEvaluationsView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.EvaluationRunSerializer

    @extend_schema(
        summary="Evaluation history of a ranker, newest first",
        responses={200: s.EvaluationRunSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id)
        page = self.paginate_queryset(runs_for_ranker(ranker=ranker))
        return self.get_paginated_response(
            s.EvaluationRunSerializer(page, many=True, context={"request": request}).data
        )

    @extend_schema(
        summary="Start an evaluation of the ranker on every test question",
        request=s.EvaluationStartSerializer,
        responses={
            202: OpenApiResponse(
                s.EvaluationStartedSerializer, description="Evaluation queued; see Location."
            ),
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
            **UNAVAILABLE,
        },
    )
    def post(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        serializer = s.EvaluationStartSerializer(data=request.data or {})
        serializer.is_valid(raise_exception=True)
        label = serializer.validated_data.get("version")
        versions = RankerVersion.objects.filter(ranker=ranker)
        if label is not None:
            version = versions.filter(label=label).first()
            if version is None:
                raise ValidationError({"version": [f"Ranker {ranker.pk} has no version {label!r}."]})
        else:
            version = ranking_version(ranker=ranker)
        run = evaluation_start(
            ranker=ranker, ranker_version=version, trigger=RunTrigger.API, created_by=request.user
        )
        return _started(request, run)


class EvaluationDetailView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = s.EvaluationDetailSerializer

    @extend_schema(
        summary="An evaluation: status, progress, headline metrics and per-question results",
        responses={200: s.EvaluationDetailSerializer, **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request, run_id: int) -> Response:
        run = run_detail(run_id=run_id)
        if run is None or caller_role(request, run.collection) is None:
            raise NotFound(f"No evaluation {run_id} that you can see.")
        context = {
            "request": request,
            "question_results": question_results(run=run),
            "role": caller_role(request, run.collection),
            "unknown_ids": unknown_ids(run=run),
        }
        return Response(s.EvaluationDetailSerializer(run, context=context).data)


CONFLICT = {
    409: OpenApiResponse(s.TrainingConflictSerializer, description="The ranker is already training."),
}


class RankerTrainView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = s.TrainingSerializer

    @extend_schema(
        summary="Train a new version of a builtin ranker from the current training labels",
        request=None,
        responses={
            202: OpenApiResponse(s.TrainingSerializer, description="Training queued; see Location."),
            400: OpenApiResponse(
                s.TrainingRefusedSerializer,  # an http ranker's refusal carries only "detail"
                description="Too few labelled training questions (says how many more), or not a builtin ranker.",
            ),
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
            **CONFLICT,
            **UNAVAILABLE,
        },
    )
    def post(self, request: Request, ranker_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        if ranker.kind != RankerKind.BUILTIN:
            return Response(
                {"detail": "Only builtin rankers train here; an http ranker announces its versions."},
                status=status.HTTP_400_BAD_REQUEST,
            )
        try:
            training = training_start(ranker=ranker, created_by=request.user, trigger="api")
        except TrainingRefused as refused:
            readiness = refused.readiness
            return Response(
                {
                    "detail": str(refused),
                    "training_questions": readiness.questions,
                    "needed": readiness.needed,
                    "rate_url": request.build_absolute_uri(readiness.rate_url),
                },
                status=status.HTTP_400_BAD_REQUEST,
            )
        except TrainingConflict as conflict:
            url = request.build_absolute_uri(reverse("api-training", args=[conflict.training.pk]))
            return Response({"detail": str(conflict), "training": url}, status=status.HTTP_409_CONFLICT)
        except TrainingUnavailable as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_503_SERVICE_UNAVAILABLE)
        body = s.TrainingSerializer(training, context={"request": request}).data
        return Response(body, status=status.HTTP_202_ACCEPTED, headers={"Location": body["url"]})


class TrainingDetailView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = s.TrainingSerializer

    @extend_schema(
        summary="A training: status, phase, progress 0–1, error, and the version it created",
        responses={200: s.TrainingSerializer, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, training_id: int) -> Response:
        training = (
            Training.objects.select_related("ranker__collection", "version__ranker")
            .filter(pk=training_id)
            .first()
        )
        if training is None or caller_role(request, training.ranker.collection) is None:
            raise NotFound(f"No training {training_id} that you can see.")
        ranker_for(request, training.ranker_id, need=Role.TRAINER)
        return Response(s.TrainingSerializer(training, context={"request": request}).data)


class VersionPromoteView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = s.PromoteSerializer

    @extend_schema(
        summary="Make a version the champion (promote a challenger, or roll back to an older version)",
        request=s.PromoteSerializer,
        responses={
            200: s.RankerVersionSerializer,
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
        serializer = s.PromoteSerializer(data=request.data or {})
        serializer.is_valid(raise_exception=True)
        reason = serializer.validated_data["reason"] or f"Promoted by hand by {request.user}."
        version_promote(version=version, changed_by=request.user, reason=reason)
        version.refresh_from_db()
        return Response(
            s.RankerVersionSerializer(RankerVersion.objects.select_related("ranker").get(pk=version.pk)).data
        )


class TokenListView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = s.ApiTokenSerializer

    @extend_schema(
        summary="The caller's own API tokens (any collection), newest first; keys are never shown again",
        responses={200: s.ApiTokenSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request) -> Response:
        page = self.paginate_queryset(tokens_of(user=request.user))
        return self.get_paginated_response(s.ApiTokenSerializer(page, many=True).data)


class TokenRevokeView(GenericAPIView):
    parser_classes = [JSONParser]
    serializer_class = s.ApiTokenSerializer

    @extend_schema(
        summary="Revoke one of the caller's own tokens (a token may revoke itself)",
        request=None,
        responses={200: s.ApiTokenSerializer, **AUTH_ERRORS, **NOT_FOUND},
    )
    def post(self, request: Request, token_id: int) -> Response:
        token = api_token_revoke_own(user=request.user, token_id=token_id)
        if token is None:
            raise NotFound(f"No token {token_id} of yours.")
        return Response(s.ApiTokenSerializer(token).data)
