"""Request and response shapes of the REST API. External ids appear as ``id``; database ids never do,
except for rankers and evaluation runs, which have no external id."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from corpus.models import Collection, Discount, GainScheme, Split
from corpus.permissions import can_see_labels
from evaluation.models import EvaluationRun, QuestionResult, Verdict
from rankers.config import redacted_config, validate_ranker_config
from rankers.models import PromotionPolicy, RankerKind, RankerVersion
from ratings.models import NOTE_MAX_LENGTH
from ratings.services import validate_stars
from trainer.models import ApiToken, Training, TrainingPhase, TrainingStatus

MAX_BULK = 10_000


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, in words.")


class ValidationErrorSerializer(serializers.Serializer):
    """``{"field": ["message", ...]}``; for a list body, ``{"<item index>": {"field": [...]}}``."""

    non_field_errors = serializers.ListField(child=serializers.CharField(), required=False)


def no_nul_characters(value, where: str = "") -> None:
    """PostgreSQL cannot store the NUL character in text or JSON; refuse it with the place it was found."""
    if isinstance(value, str):
        if "\x00" in value:
            raise serializers.ValidationError(f"Text may not contain the NUL character{where}.")
    elif isinstance(value, dict):
        for key, item in value.items():
            no_nul_characters(key, where)
            no_nul_characters(item, f" (in {key!r})")
    elif isinstance(value, list):
        for item in value:
            no_nul_characters(item, where)


def external_id_field(**kwargs):
    return serializers.CharField(max_length=200, trim_whitespace=True, **kwargs)


# --- collections ---------------------------------------------------------------------------------


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


# --- questions and answers -----------------------------------------------------------------------


class QuestionSerializer(serializers.Serializer):
    id = external_id_field(help_text="Your id for the question (unique in the collection).")
    text = serializers.CharField(max_length=10_000)
    split = serializers.ChoiceField(
        choices=Split.choices,
        required=False,
        help_text="train or test. Omitted: an existing question keeps its split; a new one is assigned "
        "by a stable hash and the collection's test fraction.",
    )
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, instance):
        return {
            "id": instance.external_id,
            "text": instance.text,
            "split": instance.split,
            "created_at": serializers.DateTimeField().to_representation(instance.created_at),
            "updated_at": serializers.DateTimeField().to_representation(instance.updated_at),
        }


_SCALAR = [{"type": "string", "nullable": True}, {"type": "number"}, {"type": "boolean"}]


@extend_schema_field(
    {
        "type": "object",
        "additionalProperties": {"oneOf": [*_SCALAR, {"type": "array", "items": {"oneOf": _SCALAR}}]},
        "description": "Fields of your own: each a string, number, boolean or null, or a list of those.",
    }
)
class MetadataField(serializers.DictField):
    """An answer's metadata: what a search engine's document carries besides title and body (Solr's
    fields): scalars and lists of scalars, no nested objects."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        for key, item in value.items():
            items = item if isinstance(item, list) else [item]
            if not all(v is None or isinstance(v, str | int | float | bool) for v in items):
                raise serializers.ValidationError(
                    f"metadata {key!r} must be a string, number, boolean or null, or a list of those."
                )
        return value


class AnswerSerializer(serializers.Serializer):
    id = external_id_field(help_text="Your id for the answer (unique in the collection).")
    title = serializers.CharField(max_length=10_000, allow_blank=True, required=False, default="")
    body = serializers.CharField(max_length=1_000_000, allow_blank=True, required=False, default="")
    metadata = MetadataField(required=False, default=dict, validators=[no_nul_characters])
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, instance):
        return {
            "id": instance.external_id,
            "title": instance.title,
            "body": instance.body,
            "metadata": instance.metadata,
            "created_at": serializers.DateTimeField().to_representation(instance.created_at),
            "updated_at": serializers.DateTimeField().to_representation(instance.updated_at),
        }


class UpsertSummarySerializer(serializers.Serializer):
    created = serializers.IntegerField()
    updated = serializers.IntegerField()
    unchanged = serializers.IntegerField()


# --- ratings ---------------------------------------------------------------------------------------


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


# --- rankers -----------------------------------------------------------------------------------------


COMPARISON_SCHEMA = {
    "type": "object",
    "description": "Its test-split evaluation against the champion of its time (trained versions; "
    "empty otherwise): both versions' NDCG@k on the same questions with today's labels, the difference "
    "with its 95% bootstrap interval, the paired randomization test's p-value and the verdict.",
    "properties": {
        "k": {"type": "integer"},
        "questions": {"type": "integer", "description": "Test questions both versions were scored on."},
        "challenger_ndcg": {"type": "number"},
        "champion_ndcg": {"type": "number"},
        "difference": {"type": "number"},
        "ci_low": {"type": "number"},
        "ci_high": {"type": "number"},
        "p_value": {"type": "number"},
        "improved": {"type": "integer"},
        "worsened": {"type": "integer"},
        "verdict": {"type": "string", "enum": ["better", "within noise", "worse"]},
        "champion": {"type": "string", "description": "Label of the champion compared with."},
        "champion_id": {"type": "integer"},
        "predicted": {
            "type": "object",
            "description": "The same comparison counting the unrated answers in either version's top k, their "
            "stars predicted from the ratings so far (the certainty page's figures at the decision; the test "
            "above scores them 0). Kept by decisions since this field exists.",
            "properties": {
                "probability": {
                    "type": "number",
                    "nullable": True,
                    "description": "P(this version's NDCG@k is higher than the champion's).",
                },
                "expected_difference": {"type": "number", "nullable": True},
                "verdict": {
                    "type": "string",
                    "enum": ["", "real improvement", "within noise", "real drop"],
                    "description": "The verdict once every answer is rated, if at least 95% of the ways the "
                    "unrated answers could turn out give it; empty: not settled yet.",
                },
                "verdict_shares": {
                    "type": "array",
                    "items": {"type": "number"},
                    "minItems": 3,
                    "maxItems": 3,
                    "description": "Shares of those ways giving a real improvement, within noise, a real drop.",
                },
                "ratings_to_settle": {
                    "type": "integer",
                    "description": "About how many more ratings would settle it.",
                },
            },
            "additionalProperties": False,
        },
    },
    "additionalProperties": False,
}


class CandidateSerializer(serializers.Serializer):
    """One candidate method training considered, with its cross-validated NDCG@k."""

    name = serializers.CharField(help_text="bm25, fusion, learned-fusion or lambdamart.")
    trained = serializers.BooleanField(help_text="Whether it learns from ratings.")
    cv_ndcg = serializers.FloatField(allow_null=True, help_text="Mean NDCG@k over the folds.")
    spread = serializers.FloatField(allow_null=True, help_text="Max − min over the fold assignments.")
    per_assignment = serializers.ListField(child=serializers.FloatField())
    chosen = serializers.BooleanField()


@extend_schema_field(COMPARISON_SCHEMA)
class ComparisonField(serializers.JSONField):
    pass


class RankerVersionSerializer(serializers.ModelSerializer):
    is_champion = serializers.SerializerMethodField(help_text="The version that ranks unless one is named.")
    comparison = ComparisonField(read_only=True)
    candidates = serializers.SerializerMethodField(
        help_text="Cross-validated NDCG@k of every candidate training considered (trained versions)."
    )
    feature_importances = serializers.DictField(
        child=serializers.FloatField(), read_only=True, help_text="Signal name: its share of the model."
    )

    class Meta:
        model = RankerVersion
        fields = [
            "id",
            "label",
            "notes",
            "created_at",
            "method",
            "is_champion",
            "label_count",
            "uses_model",
            "cv_ndcg_model",
            "cv_ndcg_bm25",
            "candidates",
            "comparison",
            "feature_importances",
        ]
        read_only_fields = fields

    def get_is_champion(self, version: RankerVersion) -> bool:
        return version.ranker.champion_id == version.pk

    @extend_schema_field(CandidateSerializer(many=True))
    def get_candidates(self, version: RankerVersion) -> list[dict[str, Any]]:
        return list(version.details.get("candidates", []))


_QUERY_VALUES = {
    "type": "object",
    "additionalProperties": {
        "oneOf": [{"type": "string"}, {"type": "number"}, {"type": "array", "items": {"type": "string"}}]
    },
}


@extend_schema_field(
    {
        "type": "object",
        "description": "builtin: candidates. http: url (required), headers, auth_header, timeout, retries. "
        "engine: preset, url (required), request {method, headers, params, form or body}, response {hits, "
        "id, score, errors}, auth_header, timeout, retries (see rankers/engine_config.py). Secrets "
        "(auth_header, header values) are shown masked. Unknown keys are refused.",
        "properties": {
            "candidates": {"type": "integer", "minimum": 10, "maximum": 1000, "description": "builtin"},
            "preset": {
                "type": "string",
                "enum": ["elasticsearch", "opensearch", "opensearch-hybrid", "solr", "custom"],
                "description": "engine",
            },
            "url": {"type": "string", "maxLength": 2000, "description": "http, engine"},
            "headers": {"type": "object", "additionalProperties": {"type": "string"}, "description": "http"},
            "request": {
                "type": "object",
                "description": "engine: the request template ({{question}}, {{rows}} placeholders)",
                "properties": {
                    "method": {"type": "string", "enum": ["GET", "POST"]},
                    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                    "params": _QUERY_VALUES,
                    "form": _QUERY_VALUES,
                    "body": {
                        "type": "object",
                        "description": "The engine's own query (Elasticsearch DSL ...), sent as JSON",
                    },
                },
                "additionalProperties": False,
            },
            "response": {
                "type": "object",
                "description": "engine: dotted paths to the hits, and each hit's id and score",
                "properties": {
                    "hits": {"type": "string"},
                    "id": {"type": "string"},
                    "score": {"type": "string"},
                    "errors": {"type": "array", "items": {"type": "string"}},
                },
                "additionalProperties": False,
            },
            "auth_header": {"type": "string", "description": "sent as Authorization"},
            "timeout": {"type": "number", "exclusiveMinimum": True, "minimum": 0, "maximum": 120},
            "retries": {"type": "integer", "minimum": 0, "maximum": 5},
        },
        "additionalProperties": False,
    }
)
class RankerConfigField(serializers.DictField):
    pass


class RankerSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    collection = serializers.SlugField(max_length=100, help_text="Slug of the collection the ranker ranks.")
    name = serializers.CharField(max_length=200)
    kind = serializers.ChoiceField(choices=RankerKind.choices)
    config = RankerConfigField(required=False, default=dict, validators=[no_nul_characters])
    is_default = serializers.BooleanField(required=False, default=False)
    champion = serializers.IntegerField(
        read_only=True, allow_null=True, help_text="Id of the champion version."
    )
    promotion_policy = serializers.ChoiceField(choices=PromotionPolicy.choices, read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    versions = RankerVersionSerializer(many=True, read_only=True, help_text="Newest first (at most 20).")

    def validate(self, attrs):
        try:
            attrs["config"] = validate_ranker_config(kind=attrs["kind"], config=attrs.get("config", {}))
        except DjangoValidationError as exc:  # one message per config key
            raise serializers.ValidationError({"config": exc.message_dict}) from None
        return attrs

    def to_representation(self, instance):
        versions = sorted(instance.versions.all(), key=lambda v: (v.created_at, v.pk), reverse=True)[:20]
        return {
            "id": instance.pk,
            "collection": instance.collection.slug,
            "name": instance.name,
            "kind": instance.kind,
            "config": redacted_config(instance.config),
            "is_default": instance.is_default,
            "champion": instance.champion_id,
            "promotion_policy": instance.promotion_policy,
            "created_at": serializers.DateTimeField().to_representation(instance.created_at),
            "versions": RankerVersionSerializer(versions, many=True).data,
        }


class VersionAnnounceSerializer(serializers.Serializer):
    label = serializers.CharField(max_length=100, help_text="The deployed model's label, e.g. its build id.")
    notes = serializers.CharField(max_length=10_000, required=False, allow_blank=True, default="")


class EvaluationStartSerializer(serializers.Serializer):
    version = serializers.CharField(
        max_length=100, required=False, help_text="Label of the version to evaluate (default: the latest)."
    )


# --- evaluations -------------------------------------------------------------------------------------


class EvaluationRunSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    ranker = serializers.IntegerField(source="ranker_id")
    version = serializers.SerializerMethodField()
    collection = serializers.CharField(source="collection.slug")
    progress_percent = serializers.IntegerField()
    questions_attempted = serializers.IntegerField(
        source="questions_done", help_text="Test questions the ranker was asked (answered or failed)."
    )
    questions_failed = serializers.IntegerField(
        help_text="Attempted test questions the ranker could not rank (each has its error)."
    )
    questions_not_attempted = serializers.IntegerField(
        help_text="Test questions never asked because the run stopped early (it could no longer succeed)."
    )
    first_error = serializers.CharField(help_text="The first error a question met, empty when none did.")
    verdict = serializers.ChoiceField(
        choices=Verdict.choices,
        allow_blank=True,
        help_text="Against the previous successful run of the ranker (paired randomization test, p < 0.05); "
        "empty until compared.",
    )

    class Meta:
        model = EvaluationRun
        fields = [
            "id",
            "url",
            "ranker",
            "version",
            "collection",
            "status",
            "trigger",
            "created_at",
            "started_at",
            "finished_at",
            "error",
            "questions_total",
            "questions_done",
            "questions_attempted",
            "questions_failed",
            "questions_not_attempted",
            "first_error",
            "progress_percent",
            "ndcg_k",
            "gain_scheme",
            "discount",
            "relevance_threshold",
            "accuracy_k",
            "label_count",
            "ndcg_mean",
            "ndcg_ci_low",
            "ndcg_ci_high",
            "accuracy_mean",
            "judged_mean",
            "unlabelled_in_top_k",
            "no_good_answer_count",
            "previous_run",
            "delta",
            "delta_ci_low",
            "delta_ci_high",
            "p_value",
            "verdict",
        ]
        read_only_fields = fields
        extra_kwargs = {
            "ndcg_mean": {"help_text": "Mean NDCG@k over test questions with a known good answer (0–1)."},
            "accuracy_mean": {
                "help_text": "Share of those questions with a correct answer in the top accuracy_k."
            },
        }

    def get_url(self, obj: EvaluationRun) -> str:
        request = self.context.get("request")
        path = reverse("api-evaluation-detail", args=[obj.pk])
        return request.build_absolute_uri(path) if request else path

    def get_version(self, obj: EvaluationRun) -> str | None:
        return obj.ranker_version.label if obj.ranker_version else None


# What a question's result says about its labels: hidden (null) from callers who may not see them.
LABEL_FIELDS = ("labels", "dcg", "ideal_dcg", "ndcg", "accuracy_hit")


class QuestionResultSerializer(serializers.ModelSerializer):
    """A question's result. For a caller who may not see its split's labels (``can_see_labels``: raters
    and rater tokens, on test questions) the fields computed from labels are null: the labels
    themselves, and DCG, ideal DCG, NDCG and the accuracy hit, from which they could be worked out."""

    ranked_answer_ids = serializers.ListField(
        child=serializers.CharField(), help_text="The answer ids the ranker returned, best first."
    )
    labels = serializers.ListField(
        child=serializers.IntegerField(allow_null=True),
        allow_null=True,
        help_text="Each ranked answer's label (0–3 stars) at run time, null when unrated.",
    )
    unknown_answer_ids = serializers.ListField(
        child=serializers.CharField(), help_text="Ranked ids the collection does not have."
    )

    question_id = serializers.CharField(source="question.external_id")
    question = serializers.CharField(source="question.text")

    def to_representation(self, instance: QuestionResult) -> dict:
        data = super().to_representation(instance)
        if not can_see_labels(role=self.context.get("role"), split=instance.question.split):
            data.update(dict.fromkeys(LABEL_FIELDS))
        return data

    class Meta:
        model = QuestionResult
        fields = [
            "question_id",
            "question",
            "ndcg",
            "dcg",
            "ideal_dcg",
            "accuracy_hit",
            "ranked_answer_ids",
            "labels",
            "unlabelled_in_top_k",
            "unknown_answer_ids",
            "error",
        ]
        read_only_fields = fields


class UnknownIdsSerializer(serializers.Serializer):
    questions = serializers.IntegerField(
        help_text="Questions whose ranking held answer ids the collection lacks."
    )
    ids = serializers.IntegerField(help_text="How many such ids in all.")
    examples = serializers.ListField(child=serializers.CharField(), help_text="Up to 5 of them.")


class EvaluationDetailSerializer(EvaluationRunSerializer):
    questions = serializers.SerializerMethodField()
    unknown_answer_ids = serializers.SerializerMethodField(
        help_text="Answer ids the ranker returned that the collection does not have (they count as unrated)."
    )

    class Meta(EvaluationRunSerializer.Meta):
        fields = [*EvaluationRunSerializer.Meta.fields, "unknown_answer_ids", "questions"]
        read_only_fields = fields

    @extend_schema_field(UnknownIdsSerializer)
    def get_unknown_answer_ids(self, obj: EvaluationRun):
        return self.context["unknown_ids"].as_json()

    @extend_schema_field(QuestionResultSerializer(many=True))
    def get_questions(self, obj: EvaluationRun):
        return QuestionResultSerializer(
            self.context["question_results"], many=True, context={"role": self.context.get("role")}
        ).data


class EvaluationStartedSerializer(serializers.Serializer):
    evaluation = EvaluationRunSerializer()
    version = RankerVersionSerializer(required=False)


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


# --- trainings -------------------------------------------------------------------------------------


class TrainingSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    ranker = serializers.IntegerField(source="ranker_id")
    version = serializers.SerializerMethodField(help_text="The version this training created, once it has.")
    status = serializers.ChoiceField(choices=TrainingStatus.choices)
    phase = serializers.ChoiceField(choices=TrainingPhase.choices)
    progress = serializers.FloatField(help_text="0 to 1, across the phases.")
    decision = serializers.ChoiceField(
        choices=[("", "not yet"), ("promoted", "promoted"), ("kept", "kept"), ("manual", "manual")],
        help_text="What the promotion policy did with the new version.",
    )

    class Meta:
        model = Training
        fields = [
            "id",
            "url",
            "ranker",
            "status",
            "phase",
            "progress",
            "error",
            "version",
            "decision",
            "decision_reason",
            "trigger",
            "created_at",
            "started_at",
            "finished_at",
        ]
        read_only_fields = fields

    def get_url(self, training: Training) -> str:
        path = reverse("api-training", args=[training.pk])
        request = self.context.get("request")
        return request.build_absolute_uri(path) if request is not None else path

    @extend_schema_field(RankerVersionSerializer(allow_null=True))
    def get_version(self, training: Training) -> dict[str, Any] | None:
        if training.version is None:
            return None
        return RankerVersionSerializer(training.version).data


class TrainingRefusedSerializer(serializers.Serializer):
    detail = serializers.CharField()
    training_questions = serializers.IntegerField(
        required=False, help_text="Training questions with a relevant label now."
    )
    needed = serializers.IntegerField(
        required=False, help_text="Training questions with a relevant label needed."
    )
    rate_url = serializers.CharField(
        required=False, help_text="The rating queue, kept to training questions."
    )


class TrainingConflictSerializer(serializers.Serializer):
    detail = serializers.CharField()
    training = serializers.CharField(help_text="URL of the training that is running.")


class PromoteSerializer(serializers.Serializer):
    reason = serializers.CharField(
        max_length=2000, required=False, allow_blank=True, default="", help_text="Why (kept in the history)."
    )


# --- tokens ----------------------------------------------------------------------------------------


class ApiTokenSerializer(serializers.ModelSerializer):
    collection = serializers.CharField(source="collection.slug")
    key_prefix = serializers.CharField(
        help_text="The key's first 8 characters, to tell tokens apart; never the key."
    )
    expired = serializers.BooleanField(source="is_expired")

    class Meta:
        model = ApiToken
        fields = [
            "id",
            "name",
            "collection",
            "role",
            "key_prefix",
            "created_at",
            "last_used_at",
            "expires_at",
            "expired",
            "revoked",
        ]
        read_only_fields = fields
