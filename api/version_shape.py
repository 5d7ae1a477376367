"""A ranker version as the API shows it: the one shape rankers, versions, trainings and started
evaluations all return (its figures, the candidates training considered, its comparison with the
champion of its time)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from evaluation.selectors import latest_runs_by_version
from rankers.models import RankerVersion
from trainer.selectors import same_models

COMPARISON_SCHEMA = {
    "type": "object",
    "description": "Its test-split comparison with the champion of its time (trained versions; "
    "empty otherwise): both versions' NDCG@k on rated answers (`measure`: each ranking condensed to its "
    "rated answers, trec_eval -J, the measure of every comparison) on the same questions with the labels "
    "of the decision, the difference with its 95% bootstrap interval, the paired randomization test's "
    "p-value and the verdict. The version's own NDCG@k (an unrated answer counts as 0 stars, the "
    "dashboard's headline) is `test_ndcg`.",
    "properties": {
        "measure": {
            "type": "string",
            "enum": ["ndcg_rated"],
            "description": "The measure: NDCG@k on rated answers.",
        },
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
        "challenger_rated_share": {
            "type": "number",
            "description": "Share of rated answers in this version's top k.",
        },
        "champion_rated_share": {
            "type": "number",
            "description": "Share of rated answers in the champion's top k.",
        },
        "champion": {"type": "string", "description": "Label of the champion compared with."},
        "champion_id": {"type": "integer"},
        "predicted": {
            "type": "object",
            "description": "The same comparison counting the unrated answers in either version's top k, their "
            "stars predicted from the ratings so far (the certainty page's figures at the decision; the test "
            "above leaves them out). Kept by decisions since this field exists.",
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
    test_ndcg = serializers.SerializerMethodField(
        help_text="NDCG@k of the version's latest successful evaluation (trec_eval's ndcg_cut: an unrated "
        "answer counts as 0 stars), the figure the dashboard and the Rankers page show; null until it has one."
    )
    test_rated_share = serializers.SerializerMethodField(
        help_text="The share of rated answers in the top k of that evaluation (0-1); null until it has one."
    )
    feature_importances = serializers.DictField(
        child=serializers.FloatField(), read_only=True, help_text="Signal name: its share of the model."
    )
    same_model_as = serializers.SerializerMethodField(
        help_text="Label of the ranker's earlier version this one is the same model as (it ranks every "
        "question alike: a training that kept the untrained fusion makes it again), or null."
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
            "test_ndcg",
            "test_rated_share",
            "feature_importances",
            "same_model_as",
        ]
        read_only_fields = fields

    def _latest_run(self, version: RankerVersion) -> Any:
        # The run the Rankers page reads: one query per ranker per response, however many versions it shows.
        cache = self.context.setdefault("latest_runs", {}) if isinstance(self.context, dict) else {}
        if version.ranker_id not in cache:
            cache[version.ranker_id] = latest_runs_by_version(ranker=version.ranker)
        return cache[version.ranker_id].get(version.pk)

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_test_ndcg(self, version: RankerVersion) -> float | None:
        run = self._latest_run(version)
        return run.ndcg_mean if run is not None else None

    @extend_schema_field(serializers.FloatField(allow_null=True))
    def get_test_rated_share(self, version: RankerVersion) -> float | None:
        run = self._latest_run(version)
        return run.judged_mean if run is not None else None

    def get_is_champion(self, version: RankerVersion) -> bool:
        return version.ranker.champion_id == version.pk

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_same_model_as(self, version: RankerVersion) -> str | None:
        # One read of the ranker's versions per response, however many versions it shows.
        cache = self.context.setdefault("same_models", {}) if isinstance(self.context, dict) else {}
        if version.ranker_id not in cache:
            cache[version.ranker_id] = same_models(ranker=version.ranker)
        same = cache[version.ranker_id].get(version.pk)
        return same.label if same else None

    @extend_schema_field(CandidateSerializer(many=True))
    def get_candidates(self, version: RankerVersion) -> list[dict[str, Any]]:
        return list(version.details.get("candidates", []))
