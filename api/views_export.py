"""A version's model as files and API calls for its search engine
(``GET /api/rankers/{id}/versions/{vid}/export/?format=...``; ``trainer.engine_export``, ``rankers.export``).

Trainers only, like the version page: the export carries figures measured on the test questions.
"""

from __future__ import annotations

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.renderers import JSONRenderer
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import ranker_for
from api.negotiation import IgnoreFormatParameter
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND, ErrorSerializer
from corpus.models import Role
from rankers.export.render import FORMATS
from trainer.engine_export import ExportMissing, ExportNotOffered, version_export_render
from trainer.selectors import versions_of

_OBJECT = {"type": "object", "additionalProperties": True}


@extend_schema_field({**_OBJECT, "description": "JSON, as the engine takes it."})
class JsonObjectField(serializers.DictField):
    pass


@extend_schema_field({"oneOf": [_OBJECT, {"type": "array", "items": _OBJECT}], "description": "JSON body."})
class JsonBodyField(serializers.JSONField):
    pass


class ExportRequestSerializer(serializers.Serializer):
    step = serializers.CharField(required=False, help_text="What the request does (the steps to apply).")
    method = serializers.ChoiceField(choices=["GET", "POST", "PUT"])
    url = serializers.CharField()
    body = JsonBodyField(required=False)
    params = JsonObjectField(required=False, help_text="Query-string parameters (Solr).")
    form = JsonObjectField(required=False, help_text="Form-encoded parameters (Solr, when the ranker posts).")


class ExportSearchSerializer(serializers.Serializer):
    linear = ExportRequestSerializer(help_text="The search that ranks with the linear model.")
    trees = ExportRequestSerializer(
        required=False, help_text="The search that ranks with the tree model (LTR)."
    )


class LeftOutSerializer(serializers.Serializer):
    feature = serializers.CharField()
    why = serializers.CharField()


class ExportFiguresSerializer(serializers.Serializer):
    k = serializers.IntegerField()
    window = serializers.IntegerField(help_text="K: how many of the engine's top answers the model reranks.")
    training_questions = serializers.IntegerField()
    learnable_questions = serializers.IntegerField()
    test_questions = serializers.IntegerField()
    ndcg_engine = serializers.FloatField(allow_null=True, help_text="NDCG@k of the engine alone.")
    ndcg_export_app = serializers.FloatField(allow_null=True, help_text="The linear model as the app ranks.")
    ndcg_export_engine = serializers.FloatField(
        allow_null=True, help_text="The exported request, run by the engine."
    )
    ndcg_trees_app = serializers.FloatField(allow_null=True, help_text="The tree model as the app ranks.")
    ndcg_version = serializers.FloatField(allow_null=True, help_text="The version's own ranking.")
    parity = serializers.FloatField(allow_null=True, help_text="|ndcg_export_app − ndcg_export_engine|.")
    parity_tolerance = serializers.FloatField()
    parity_ok = serializers.BooleanField()
    rankings_differing = serializers.IntegerField()
    version = serializers.CharField(allow_null=True)
    cost = serializers.FloatField(
        allow_null=True,
        help_text="ndcg_version − ndcg_export_app (NDCG@k on rated answers: what staying inside the engine "
        "costs; negative: the export ranks better), only when its sign can be trusted (cost_status "
        "'measured'); null otherwise.",
    )
    cost_status = serializers.ChoiceField(
        choices=["measured", "within noise", "not measurable yet"],
        help_text="'not measurable yet': too few rated answers in the top k of the version's or the "
        "export's ranking on the test questions for the sign to be trusted; 'within noise': the 95% "
        "interval of the difference holds 0.",
    )
    cost_text = serializers.CharField(help_text="The cost in words, as the version page shows it.")
    cost_ci_low = serializers.FloatField(required=False, allow_null=True)
    cost_ci_high = serializers.FloatField(required=False, allow_null=True)
    rated_share_version = serializers.FloatField(
        required=False, help_text="Share of the version's top-k places holding a rated answer."
    )
    rated_share_export = serializers.FloatField(
        required=False, help_text="Share of the export's top-k places holding a rated answer."
    )
    seconds = serializers.FloatField()


class ModelOfferSerializer(serializers.Serializer):
    offered = serializers.BooleanField(help_text="Whether this model is in the export.")
    why = serializers.CharField(help_text="Why not, in words (empty when offered).")


class ModelOffersSerializer(serializers.Serializer):
    linear = ModelOfferSerializer()
    trees = ModelOfferSerializer(required=False, help_text="The tree model (the LTR formats).")


class NotOfferedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    format = serializers.CharField()
    offered = serializers.BooleanField(help_text="Always false.")
    why = serializers.CharField(help_text="Why the format is not offered (as detail).")


class VersionExportSerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=list(FORMATS))
    engine = serializers.ChoiceField(choices=["opensearch", "solr"])
    name = serializers.CharField(help_text="Of the featureset or feature store and the models.")
    window = serializers.IntegerField()
    summary = serializers.CharField()
    features = serializers.ListField(child=serializers.CharField())
    weights = serializers.DictField(child=serializers.FloatField(), help_text="The linear model's weights.")
    requests = ExportRequestSerializer(many=True, help_text="To apply in order (none without a plugin).")
    search = ExportSearchSerializer()
    notes = serializers.ListField(child=serializers.CharField())
    left_out = LeftOutSerializer(many=True)
    figures = ExportFiguresSerializer()
    models = ModelOffersSerializer(
        help_text="Whether each model the format carries is in it: a model scoring below the engine alone "
        "on the test questions, or any model of a version that learned nothing, is left out."
    )


NO_EXPORT = {
    409: OpenApiResponse(
        PolymorphicProxySerializer(
            component_name="VersionExportRefusal",
            serializers=[ErrorSerializer, NotOfferedSerializer],
            resource_type_field_name=None,
        ),
        description="The version has no export model (not an engine ranker's, or made before exports), or "
        "this format is not offered (`offered: false`, `why`): its model would score below the engine "
        "alone, or the version learned nothing.",
    )
}


class VersionExportView(GenericAPIView):
    serializer_class = VersionExportSerializer
    content_negotiation_class = IgnoreFormatParameter  # ?format= names the export format
    renderer_classes = [JSONRenderer]
    pagination_class = None

    @extend_schema(
        summary="A version's model for its search engine: the files and API calls to apply",
        description="An engine ranker's version exported into its engine: `opensearch-rescore` (the search "
        "request with the linear model as a `rescore`, no plugin), `solr-rerank` (the select parameters "
        "with `{!rerank}`, no plugin), `opensearch-ltr` and `solr-ltr` (the Learning to Rank plugins' "
        "feature set, linear model and tree model). `requests` are applied in order, `search` holds the "
        "request that ranks with each model (`{{question}}` where the question goes), `figures` what it "
        "scores on the test questions (NDCG@k of the engine alone, of the model as the app ranks and as "
        "the engine ranks, their difference) and `left_out` the features of the version's reranker that "
        "the engine cannot compute. Formats of the other engine family are refused (400).",
        parameters=[OpenApiParameter("format", str, enum=list(FORMATS), required=True)],
        responses={
            200: OpenApiResponse(VersionExportSerializer, description="The export in the format asked for."),
            **INVALID,
            **AUTH_ERRORS,
            **FORBIDDEN,
            **NOT_FOUND,
            **NO_EXPORT,
        },
    )
    def get(self, request: Request, ranker_id: int, version_id: int) -> Response:
        ranker, _ = ranker_for(request, ranker_id, need=Role.TRAINER)
        version = versions_of(ranker=ranker).select_related("ranker").filter(pk=version_id).first()
        if version is None:
            raise NotFound(f"Ranker {ranker_id} has no version {version_id}.")
        fmt = request.query_params.get("format", "")
        if fmt not in FORMATS:
            raise ValidationError(
                {"format": [f"format must be one of {', '.join(FORMATS)}, not {fmt[:40]!r}."]}
            )
        try:
            body = version_export_render(version=version, fmt=fmt)
        except ExportMissing as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_409_CONFLICT)
        except ExportNotOffered as exc:
            why = str(exc)
            return Response(
                {"detail": why, "format": fmt, "offered": False, "why": why}, status=status.HTTP_409_CONFLICT
            )
        except ValueError as exc:  # a format of the other engine family
            raise ValidationError({"format": [str(exc)]}) from None
        return Response(body)
