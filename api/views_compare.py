"""Comparing 2 to 6 evaluation runs through the API: the same figures as the compare page
(``evaluation.selectors.runs_compare``)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.generics import GenericAPIView
from rest_framework.request import Request
from rest_framework.response import Response

from api.access import collection_for
from api.responses import AUTH_ERRORS, FORBIDDEN, INVALID, NOT_FOUND
from corpus.models import Role
from evaluation.selectors import COMPARE_MAX_RUNS, COMPARE_MIN_RUNS, run_in_collection, runs_compare


class ComparedRunSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    ranker = serializers.CharField()
    version = serializers.CharField(allow_null=True)
    created_at = serializers.DateTimeField()
    ndcg_rated_today = serializers.FloatField(
        allow_null=True,
        help_text="Mean NDCG@k on rated answers of the run's rankings scored with today's labels: every "
        "comparison's measure, each ranking condensed to its rated answers (trec_eval -J). A run's own "
        "`ndcg_mean` (GET /api/evaluations/{id}/) counts an unrated answer as 0 stars.",
    )
    rated_share_today = serializers.FloatField(
        allow_null=True, help_text="The share of rated answers in the run's top k with today's labels (0-1)."
    )


class MatrixRowSerializer(serializers.Serializer):
    question_id = serializers.CharField()
    question = serializers.CharField()
    ndcg = serializers.ListField(
        child=serializers.FloatField(allow_null=True),
        help_text="Each run's NDCG@k on rated answers on this question with today's labels, in the order of `runs` "
        "(null: not answered, or no known good answer).",
    )


class QuestionChangeSerializer(serializers.Serializer):
    question = serializers.CharField()
    change = serializers.FloatField()


class PairSerializer(serializers.Serializer):
    a = serializers.IntegerField(help_text="Id of the older run.")
    b = serializers.IntegerField(help_text="Id of the newer run.")
    difference = serializers.FloatField(allow_null=True, help_text="Mean NDCG@k of B minus A.")
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True, help_text="Paired randomization test.")
    p_holm = serializers.FloatField(
        allow_null=True, help_text="The p-value after Holm's correction over all pairs."
    )
    verdict = serializers.CharField(
        help_text='"real improvement", "within noise", "real drop" (from p_holm); "" if no question is shared.'
    )
    questions = serializers.IntegerField(help_text="Questions both runs answered with a known good answer.")
    winners = serializers.IntegerField(help_text="Questions where B scores higher than A.")
    losers = serializers.IntegerField()
    ties = serializers.IntegerField()
    biggest_winners = QuestionChangeSerializer(many=True)
    biggest_losers = QuestionChangeSerializer(many=True)


class RunsComparisonSerializer(serializers.Serializer):
    k = serializers.IntegerField(help_text="The NDCG cutoff of the figures (the newest run's).")
    runs = ComparedRunSerializer(many=True)
    pairs = PairSerializer(many=True)
    questions = MatrixRowSerializer(many=True)


class RunsCompareView(GenericAPIView):
    serializer_class = RunsComparisonSerializer
    pagination_class = None

    @extend_schema(
        summary="Compare 2 to 6 evaluation runs side by side",
        description="Every run's rankings scored with today's labels: the per-question NDCG@k matrix "
        "(questions where the runs differ most first), and for each pair (older A, newer B) the change "
        "with its 95% bootstrap interval, the questions won, lost and tied, and the paired randomization "
        "p-value with Holm's correction over all pairs. Trainers only, like the compare page.",
        parameters=[
            OpenApiParameter(
                "run",
                int,
                many=True,
                required=True,
                description="Run ids (2 to 6), repeated: `?run=3&run=5`.",
            )
        ],
        responses={200: RunsComparisonSerializer, **INVALID, **AUTH_ERRORS, **FORBIDDEN, **NOT_FOUND},
    )
    def get(self, request: Request, slug: str) -> Response:
        collection, _ = collection_for(request, slug, need=Role.TRAINER)
        ids = request.query_params.getlist("run")
        if not COMPARE_MIN_RUNS <= len(ids) <= COMPARE_MAX_RUNS:
            raise ValidationError(
                {"run": [f"Give {COMPARE_MIN_RUNS} to {COMPARE_MAX_RUNS} run ids, not {len(ids)}."]}
            )
        runs = []
        for raw in ids:
            run = run_in_collection(run_id=raw, collection=collection)
            if run is None:
                raise ValidationError(
                    {"run": [f"No evaluation run {raw!r} in collection {collection.slug!r}."]}
                )
            runs.append(run)
        if len({run.pk for run in runs}) != len(runs):
            raise ValidationError({"run": ["Each run can be compared once."]})
        comparison = runs_compare(runs=runs)
        ordered = comparison.runs
        return Response(
            {
                "k": comparison.k,
                "runs": [
                    {
                        "id": run.pk,
                        "ranker": run.ranker.name,
                        "version": run.ranker_version.label if run.ranker_version else None,
                        "created_at": run.created_at,
                        "ndcg_rated_today": mean,
                        "rated_share_today": share,
                    }
                    for run, mean, share in zip(
                        ordered, comparison.means, comparison.rated_shares, strict=True
                    )
                ],
                "pairs": [
                    {
                        "a": ordered[p.a].pk,
                        "b": ordered[p.b].pk,
                        "difference": p.difference,
                        "ci_low": p.ci_low,
                        "ci_high": p.ci_high,
                        "p_value": p.p_value,
                        "p_holm": p.p_holm,
                        "verdict": p.verdict,
                        "questions": p.n,
                        "winners": p.winners,
                        "losers": p.losers,
                        "ties": p.ties,
                        "biggest_winners": [{"question": t, "change": d} for t, d in p.biggest_winners],
                        "biggest_losers": [{"question": t, "change": d} for t, d in p.biggest_losers],
                    }
                    for p in comparison.pairs
                ],
                "questions": [
                    {"question_id": row.external_id, "question": row.text, "ndcg": row.ndcg}
                    for row in comparison.questions
                ],
            }
        )
