"""``/api/collections/`` and ``/api/collections/{slug}/``: the collections the caller can see, with their
counts and the caller's role in each; creating one (the creator becomes its trainer)."""

from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery
from django.db.models.functions import Coalesce
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import caller_role, collection_for, token_of, visible_collections
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.models import Answer, Collection, Discount, GainScheme, Question, Role, Split
from corpus.permissions import can_create_collections
from corpus.services import collection_create
from ratings.models import Label

# --- what the caller sends ---------------------------------------------------------------------------


class CollectionCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200)
    slug = serializers.SlugField(max_length=100, required=False, allow_blank=True)
    description = serializers.CharField(required=False, allow_blank=True, max_length=10_000)
    ndcg_k = serializers.IntegerField(required=False, min_value=1, max_value=1000)
    gain_scheme = serializers.ChoiceField(choices=GainScheme.choices, required=False)
    discount = serializers.ChoiceField(choices=Discount.choices, required=False)
    relevance_threshold = serializers.IntegerField(required=False, min_value=1, max_value=3)
    accuracy_k = serializers.IntegerField(required=False, min_value=1, max_value=1000)
    test_fraction = serializers.FloatField(required=False, min_value=0.0, max_value=1.0)

    def validate_name(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("A collection needs a name.")
        return value.strip()


# --- what comes back ---------------------------------------------------------------------------------


class CollectionSerializer(serializers.ModelSerializer):
    role = serializers.SerializerMethodField(help_text="Your role here: trainer or rater.")
    answer_count = serializers.IntegerField(read_only=True)
    train_question_count = serializers.IntegerField(read_only=True)
    test_question_count = serializers.IntegerField(read_only=True)
    label_count = serializers.IntegerField(read_only=True)

    class Meta:
        model = Collection
        fields = [
            "slug",
            "name",
            "description",
            "ndcg_k",
            "gain_scheme",
            "discount",
            "relevance_threshold",
            "accuracy_k",
            "test_fraction",
            "created_at",
            "role",
            "answer_count",
            "train_question_count",
            "test_question_count",
            "label_count",
        ]
        read_only_fields = fields

    def get_role(self, obj: Collection) -> str | None:
        return self.context["roles"].get(obj.pk)


# --- views -------------------------------------------------------------------------------------------


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


class CollectionListView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = CollectionSerializer

    @extend_schema(
        summary="Collections you can see",
        responses={200: CollectionSerializer(many=True), **AUTH_ERRORS, **NOT_FOUND},
    )
    def get(self, request: Request) -> Response:
        collections, roles = visible_collections(request)
        page = self.paginate_queryset(_with_counts(collections).order_by("name", "pk"))
        return self.get_paginated_response(
            CollectionSerializer(page, many=True, context={"roles": roles}).data
        )

    @extend_schema(
        summary="Create a collection (you become its trainer)",
        description=(
            "Signed in: staff and trainers of a collection. With a token: a trainer token. The token still "
            "acts only in its own collection: issue one for the new collection to work in it."
        ),
        request=CollectionCreateSerializer,
        responses={201: CollectionSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN},
    )
    def post(self, request: Request) -> Response:
        token = token_of(request)
        # A token acts in its one collection, with its role there; a trainer token (its user trains that
        # collection, or is a superuser) may also start a collection, so a script needs no browser. A rater
        # token, meant for a service that rates, may not, whatever its user may do when signed in.
        if token is not None and caller_role(request, token.collection) != Role.TRAINER:
            raise PermissionDenied(
                f"This token has the rater role in collection {token.collection.slug!r}; only a trainer "
                "token (or a signed-in trainer or staff member) may create collections."
            )
        if not can_create_collections(user=request.user):
            raise PermissionDenied("Only staff and trainers of a collection may create collections.")
        serializer = CollectionCreateSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        slug = data.pop("slug", "")
        if slug and Collection.objects.filter(slug=slug).exists():
            raise ValidationError({"slug": [f"A collection with slug {slug!r} already exists."]})
        collection = collection_create(created_by=request.user, slug=slug, **data)
        collection = _with_counts(Collection.objects.filter(pk=collection.pk)).get()
        body = CollectionSerializer(collection, context={"roles": {collection.pk: Role.TRAINER}}).data
        return Response(body, status=status.HTTP_201_CREATED)


class CollectionDetailView(GenericAPIView):
    parser_classes = [JSONParser]  # bodies are JSON (lists included, which forms can't express)
    serializer_class = CollectionSerializer

    @extend_schema(
        summary="One collection", responses={200: CollectionSerializer, **AUTH_ERRORS, **NOT_FOUND}
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, role = collection_for(request, slug)
        collection = _with_counts(Collection.objects.filter(pk=collection.pk)).get()
        return Response(CollectionSerializer(collection, context={"roles": {collection.pk: role}}).data)
