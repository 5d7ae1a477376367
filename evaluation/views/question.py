"""One question of a run: the ranker's top k with stars, gains and discounts beside the ideal order, why
accuracy@k and NDCG@k disagree on it, in words, and (for trainers) what production users clicked."""

from __future__ import annotations

import math
from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from corpus.models import Answer, GainScheme, Role
from corpus.permissions import can_see_labels
from evaluation.models import EvaluationRun, QuestionResult
from evaluation.numbers import figure
from evaluation.selectors.clicks import ImplicitJudgment, implicit_judgments_cached
from evaluation.views.access import run_page
from ratings.models import STAR_WORDS, Label
from ratings.selectors import judge_replies, notes_for_question


def stars(label: int | None) -> str:
    if label is None:
        return "unrated"
    return "★" * label + "☆" * (3 - label)


def gain_of(label: int | None, scheme: str) -> float:
    if label is None or label <= 0:
        return 0.0
    return float(2**label - 1) if scheme == GainScheme.EXPONENTIAL else float(label)


def discount_of(rank: int, discount: str) -> float:
    if discount == "log2":
        return math.log2(rank + 1)
    return max(1.0, math.log2(rank))


def disagreement(result: QuestionResult, run: EvaluationRun) -> str:
    """Why accuracy@k and NDCG@k disagree on this question, in words ("" when they agree)."""
    if result.error or result.ndcg is None:
        return ""
    k, acc_k, threshold = run.ndcg_k, run.accuracy_k, run.relevance_threshold
    labels = result.labels
    if result.accuracy_hit and result.ndcg < 0.5:
        first = next(
            i for i, label in enumerate(labels[:acc_k], 1) if label is not None and label >= threshold
        )
        best = result.ideal[0][1] if result.ideal else None
        return (
            f"Accuracy@{acc_k} counts this question as a success because the answer at rank {first} is rated "
            f"{labels[first - 1]} star{'s' if labels[first - 1] != 1 else ''} (at least {threshold} counts as "
            f"correct). NDCG@{k} is only {figure(result.ndcg)} because it also weighs how good the answers are and "
            f"where they are: the best known answers ({best} stars) are ranked low or missing from the top {k}, "
            f"and weaker or unrated answers sit above them."
        )
    if not result.accuracy_hit and result.ndcg > 0:
        relevant_rank = next(
            (i for i, label in enumerate(labels[:k], 1) if label is not None and label > 0), None
        )
        where = f"at rank {relevant_rank}" if relevant_rank else f"in the top {k}"
        return (
            f"Accuracy@{acc_k} counts this question as a miss: no answer in the top {acc_k} is rated at least "
            f"{threshold} star{'s' if threshold != 1 else ''}. NDCG@{k} is still {figure(result.ndcg)} because a "
            f"relevant answer appears {where}; NDCG gives it credit, less the lower it is ranked."
        )
    return ""


@dataclass(frozen=True)
class RankedRow:
    rank: int
    answer_id: str
    title: str
    label: int | None
    stars: str
    gain: float
    discount: float
    contribution: float
    unknown: bool = False


def ranked_rows(
    ids_labels: list[tuple[str, int | None]], run: EvaluationRun, titles: dict[str, str], unknown: set[str]
) -> list[RankedRow]:
    rows = []
    for rank, (answer_id, label) in enumerate(ids_labels, 1):
        gain = gain_of(label, run.gain_scheme)
        discount = discount_of(rank, run.discount)
        rows.append(
            RankedRow(
                rank=rank,
                answer_id=answer_id,
                title=titles.get(answer_id, ""),
                label=label,
                stars=stars(label),
                gain=gain,
                discount=discount,
                contribution=gain / discount,
                unknown=answer_id in unknown,
            )
        )
    return rows


@dataclass(frozen=True)
class ClickRow:
    judgment: ImplicitJudgment
    label: int | None


def click_rows(*, run: EvaluationRun, question_id: int) -> list[ClickRow]:
    """The question's implicit judgments from the production log (default parameters), each with the
    pair's label (None: unrated)."""
    judgments = implicit_judgments_cached(collection=run.collection).of_question(question_id)
    labels = dict(Label.objects.filter(question_id=question_id).values_list("answer_id", "gain"))
    return [ClickRow(j, labels.get(j.answer_id)) for j in judgments]


@run_page()
@require_GET
def question_detail(request: HttpRequest, *, run: EvaluationRun, role: str, question_id: int) -> HttpResponse:
    """One question of a run: the ranker's top k with stars and gains beside the ideal order.

    It shows the question's labels, so it follows ``can_see_labels`` (as the API does): raters never see
    a test question's (evaluations rerun test questions, so in practice only trainers see this page).
    """
    result = get_object_or_404(
        QuestionResult.objects.select_related("question"), run=run, question_id=question_id
    )
    if not can_see_labels(role=role, split=result.question.split):
        raise PermissionDenied("Only the collection's trainers see the labels of test questions.")
    k = run.ndcg_k
    top = list(zip(result.ranked_answer_ids[:k], result.labels[:k], strict=False))
    ideal = [(a, g) for a, g in result.ideal[:k]]
    titles = dict(
        Answer.objects.filter(
            collection_id=run.collection_id, external_id__in={a for a, _ in top} | {a for a, _ in ideal}
        )
        .order_by()  # by the unique index: the default order makes SQLite walk the whole collection
        .values_list("external_id", "title")
    )
    unknown = set(result.unknown_answer_ids)
    return render(
        request,
        "evaluation/question.html",
        {
            "run": run,
            "collection": run.collection,
            "result": result,
            "question": result.question,
            "top": ranked_rows(top, run, titles, unknown),
            "ideal": ranked_rows(ideal, run, titles, set()),
            "explanation": disagreement(result, run),
            "star_words": STAR_WORDS,
            "notes": notes_for_question(question=result.question),
            "show_raters": role == Role.TRAINER,
            "judge_replies": judge_replies(question_id=result.question_id),
            # Trainers only: clicks are evidence about test questions' answers, like their labels.
            "clicks": click_rows(run=run, question_id=result.question_id) if role == Role.TRAINER else None,
        },
    )
