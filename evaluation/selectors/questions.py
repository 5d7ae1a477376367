"""Reads of the questions of a run worth a look: the worst ones, those that need ratings first, and those
without a known good answer."""

from __future__ import annotations

from django.db.models import Case, F, Q, Value, When

from evaluation.models import EvaluationRun, QuestionResult


def mostly_unlabelled(*, k: int) -> Q:
    """Results whose top k holds more unrated answers than rated ones (their NDCG says little yet).

    A result stores the unrated count and judged@k (rated answers / k), so rated = judged × k; the
    half keeps float rounding of judged × k from deciding a tie (3 unrated beside 3 rated is not "mostly").
    """
    return Q(unlabelled_in_top_k__gt=F("judged") * k + 0.5)


def worst_questions(*, run: EvaluationRun, limit: int) -> list[QuestionResult]:
    """Where the ranker does badly: the lowest NDCG among questions with a known good answer whose top k
    is mostly rated (a question whose top k is mostly unrated needs ratings first: see needs_ratings)."""
    return list(
        QuestionResult.objects.filter(run=run, ndcg__isnull=False, error="")
        .exclude(mostly_unlabelled(k=run.ndcg_k))
        .select_related("question")
        .order_by("ndcg", "question_id")[:limit]
    )


def needs_ratings(*, run: EvaluationRun, limit: int) -> list[QuestionResult]:
    """Test questions whose NDCG cannot be trusted until someone rates: no known good answer (NDCG
    undefined) first, then those whose top k is mostly unrated, most unrated first."""
    return list(
        QuestionResult.objects.filter(run=run, error="")
        .filter(Q(ndcg__isnull=True) | mostly_unlabelled(k=run.ndcg_k))
        .select_related("question")
        .order_by(
            Case(When(ndcg__isnull=True, then=Value(0)), default=Value(1)),
            "-unlabelled_in_top_k",
            "question_id",
        )[:limit]
    )


def no_good_answer_questions(*, run: EvaluationRun, limit: int = 50) -> list[QuestionResult]:
    """Questions the ranker answered but where no answer is known to be relevant (NDCG undefined)."""
    return list(
        QuestionResult.objects.filter(run=run, ndcg__isnull=True, error="")
        .select_related("question")
        .order_by("question_id")[:limit]
    )
