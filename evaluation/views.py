"""The training dashboard: one headline score, its history, what to rate next, and the drilldown.

Access: anonymous users are sent to log in; non-members get 404 (we do not reveal which collections
exist); raters see the simplified dashboard (headline, chart, their own contribution); trainers see
everything and may start evaluations (raters get 403 on those pages).
"""

from __future__ import annotations

import functools
import io
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from corpus.models import Answer, Collection, GainScheme, Role
from corpus.permissions import can_see_labels, collection_access, page_collection
from corpus.selectors import collections_for_user
from evaluation import selectors
from evaluation.exports import RUN_EXPORTS, write_run_export
from evaluation.models import EvaluationRun, QuestionResult, RunStatus, RunTrigger
from evaluation.numbers import figure, figure_range
from evaluation.services import EvaluationUnavailable, evaluation_start
from rankers.models import Ranker
from ratings.models import STAR_WORDS
from ratings.selectors import judge_replies, notes_for_question

# Below this share of judged answers in the top k, the headline is uncertain: say so and link to rating.
JUDGED_WARNING = 0.9
WORST_SHOWN = 10
DRILLDOWN_PAGE = 100
# The table under the chart (and the chart without JavaScript) lists the most recent runs only.
HISTORY_TABLE_ROWS = 100
# Compare pages list this many winners and losers (biggest first); the counts cover all of them.
COMPARE_SHOWN = 50


REFUSAL = "Only the collection's trainers can see this page or start evaluations."


def collection_page(*, manage: bool = False) -> Callable:
    """Resolve ``slug`` to a collection the user may see (or manage) and pass it and the role on."""

    def decorator(view: Callable) -> Callable:
        @login_required
        @functools.wraps(view)
        def wrapped(request: HttpRequest, slug: str, **kwargs) -> HttpResponse:
            collection, access = page_collection(user=request.user, slug=slug, manage=manage, refusal=REFUSAL)
            return view(request, collection=collection, role=access.role, **kwargs)

        return wrapped

    return decorator


def run_page(*, manage: bool = False) -> Callable:
    """Resolve ``run_id`` to a run of a collection the user may see (or manage)."""

    def decorator(view: Callable) -> Callable:
        @login_required
        @functools.wraps(view)
        def wrapped(request: HttpRequest, run_id: int, **kwargs) -> HttpResponse:
            run = selectors.run_detail(run_id=run_id)
            if run is None:
                raise Http404("No such evaluation run.")
            access = collection_access(user=request.user, collection=run.collection)
            return view(
                request, run=run, role=access.or_refuse(manage=manage, refusal=REFUSAL).role, **kwargs
            )

        return wrapped

    return decorator


# ----------------------------------------------------------------------------------------- presentation


@dataclass(frozen=True)
class Headline:
    """The headline number and the words around it."""

    run: EvaluationRun

    @property
    def ndcg(self) -> str:
        return figure(self.run.ndcg_mean)

    @property
    def accuracy(self) -> str:
        """Accuracy@k in the NDCG's format (0.700): both are 0–1 means over the same questions."""
        return figure(self.run.accuracy_mean)

    @property
    def judged_percent(self) -> int | None:
        return round(100 * self.run.judged_mean) if self.run.judged_mean is not None else None

    @property
    def ci(self) -> str:
        if self.run.ndcg_ci_low is None:
            return ""
        return figure_range(self.run.ndcg_ci_low, self.run.ndcg_ci_high)

    @property
    def low_judged(self) -> bool:
        return self.run.judged_mean is not None and self.run.judged_mean < JUDGED_WARNING


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


def needs_ratings_reason(result: QuestionResult, k: int) -> str:
    """Why a question needs ratings before its NDCG means much, in words."""
    if result.ndcg is None:
        return f"No known good answer yet, so it has no NDCG@{k}."
    rated = round((result.judged or 0.0) * k)
    shown = rated + result.unlabelled_in_top_k
    return f"{result.unlabelled_in_top_k} of the {shown} answers in its top {k} are unrated."


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


def change_since_previous(run: EvaluationRun | None) -> selectors.ChangeExplanation | None:
    """The run's change since the ranker's previous successful run (None for a first run)."""
    if run is None or run.status != RunStatus.SUCCEEDED:
        return None
    previous = selectors.previous_successful_run(run=run)
    if previous is None:
        return None
    return selectors.change_explained(run_a=previous, run_b=run)


# ----------------------------------------------------------------------------------------- pages


def _htmx(request: HttpRequest) -> bool:
    return bool(getattr(request, "htmx", False))  # django_htmx's middleware sets it


@login_required
@require_GET
def index(request: HttpRequest) -> HttpResponse:
    """The collections whose dashboards the user may see."""
    collections = list(collections_for_user(user=request.user).order_by("name"))
    return render(request, "evaluation/index.html", {"collections": collections})


def _ranker_for(request: HttpRequest, dashboard_rankers: list[Ranker]) -> Ranker | None:
    wanted = request.GET.get("ranker")
    if wanted:
        ranker = next((r for r in dashboard_rankers if str(r.pk) == wanted), None)
        if ranker is None:
            raise Http404("No such ranker in this collection.")
        return ranker
    return dashboard_rankers[0] if dashboard_rankers else None


@collection_page()
@require_GET
def dashboard(request: HttpRequest, *, collection: Collection, role: str) -> HttpResponse:
    """Headline NDCG@k with its change and verdict, the history chart, warnings and the worst questions."""
    rankers = selectors.rankers_for_dashboard(collection=collection)
    ranker = _ranker_for(request, rankers)
    context: dict = {
        "collection": collection,
        "role": role,
        "is_trainer": role == Role.TRAINER,
        "rankers": rankers,
    }
    if ranker is not None:
        board = selectors.dashboard(collection=collection, ranker=ranker, rankers=rankers)
        run_url = reverse("evaluation:run", args=[0]).replace("/0/", "/{}/")
        context.update(
            ranker=ranker,
            board=board,
            active=board.active,
            headline=Headline(board.latest) if board.latest else None,
            change=change_since_previous(board.latest),
            chart=[p.as_json() for p in board.history],
            chart_changes=[m.as_json() for m in board.champion_changes],
            history_rows=[(p, run_url.format(p.run_id)) for p in board.history[::-1][:HISTORY_TABLE_ROWS]],
            compare_max_runs=selectors.COMPARE_MAX_RUNS,
            history_hidden=max(0, len(board.history) - HISTORY_TABLE_ROWS),
        )
        # The queue rates for the default ranker, so "How sure are we?" (its own page, loaded into this one
        # by htmx) is about that ranker's versions. Found in the list already loaded: no query.
        default = next((r for r in rankers if r.is_default), None) or min(
            rankers, key=lambda r: (r.created_at, r.pk)
        )
        context["certainty_here"] = ranker.pk == default.pk
        if role == Role.TRAINER and board.latest is not None:
            context.update(
                worst=selectors.worst_questions(run=board.latest, limit=WORST_SHOWN),
                needs_ratings=[
                    (r, needs_ratings_reason(r, board.latest.ndcg_k))
                    for r in selectors.needs_ratings(run=board.latest, limit=WORST_SHOWN)
                ],
            )
    if role != Role.TRAINER:
        context["contribution"] = selectors.rater_contribution(
            user=cast(Any, request.user), collection=collection
        )
    return render(request, "evaluation/dashboard.html", context)


@collection_page(manage=True)
@require_POST
def run_start(request: HttpRequest, *, collection: Collection, role: str, ranker_id: int) -> HttpResponse:
    """Start an evaluation of the ranker; htmx gets the disabled button and the live progress bar, a plain
    form a redirect to the dashboard (which shows the same)."""
    ranker = get_object_or_404(Ranker, pk=ranker_id, collection=collection)
    try:
        run = evaluation_start(ranker=ranker, trigger=RunTrigger.UI, created_by=cast(Any, request.user))
    except EvaluationUnavailable as exc:
        response = render(
            request,
            "evaluation/unavailable.html" if not _htmx(request) else "evaluation/dashboard.html#start-error",
            {"collection": collection, "ranker": ranker, "message": str(exc)},
            status=503,
        )
        if _htmx(request):
            # The message goes under the button, which stays usable.
            response["HX-Retarget"], response["HX-Reswap"] = "#run-progress", "innerHTML"
        return response
    if _htmx(request):
        # The button (disabled while the run is active) and the run's live progress bar.
        return render(
            request,
            "evaluation/dashboard.html#run-control",
            {"collection": collection, "ranker": ranker, "is_trainer": True, "active": run},
        )
    response = HttpResponseRedirect(
        f"{reverse('evaluation:dashboard', args=[collection.slug])}?ranker={ranker.pk}"
    )
    response.status_code = 303  # See Other: the browser GETs the dashboard
    return response


@run_page()
@require_GET
def run_progress(request: HttpRequest, *, run: EvaluationRun, role: str) -> HttpResponse:
    """The progress bar of a run (polled by htmx every second until the run has finished)."""
    response = render(request, "evaluation/run.html#progress", {"run": run, "polling": not run.is_finished})
    if run.is_finished and _htmx(request) and request.GET.get("reload") == "1":
        # The page that polled shows stale results: reload it now that the run is over.
        response["HX-Refresh"] = "true"
    return response


@run_page(manage=True)
@require_GET
def run_detail(request: HttpRequest, *, run: EvaluationRun, role: str) -> HttpResponse:
    """A run: status or failure reason, its numbers, and every question worst first (paginated)."""
    page = Paginator(selectors.question_results(run=run), DRILLDOWN_PAGE).get_page(request.GET.get("page"))
    return render(
        request,
        "evaluation/run.html",
        {
            "run": run,
            "collection": run.collection,
            "headline": Headline(run) if run.status == RunStatus.SUCCEEDED else None,
            "change": change_since_previous(run),
            "page": page,
            "polling": not run.is_finished,
            "unknown": selectors.unknown_ids(run=run),
        },
    )


@run_page(manage=True)
@require_GET
def run_export(request: HttpRequest, *, run: EvaluationRun, role: str, fmt: str) -> HttpResponse:
    """The run as a file: ``trec-run``, ``csv`` or ``jsonl`` (see ``evaluation.exports``); trainers only,
    as the run page (the results carry test labels)."""
    if fmt not in RUN_EXPORTS:
        raise Http404(f"No export format {fmt!r}: trec-run, csv or jsonl.")
    out = io.StringIO()
    write_run_export(fmt, selectors.run_export_rows(run=run), out, run_id=run.pk)
    content_type, extension = RUN_EXPORTS[fmt]
    response = HttpResponse(out.getvalue(), content_type=f"{content_type}; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{run.collection.slug}-run-{run.pk}.{extension}"'
    return response


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
        ).values_list("external_id", "title")
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
        },
    )


@collection_page(manage=True)
@require_GET
def compare(request: HttpRequest, *, collection: Collection, role: str) -> HttpResponse:
    """Two runs side by side (``a``, ``b``): their numbers and per-question NDCG changes, biggest winners and
    losers first. Or 2 to 6 runs (``run`` repeated): the per-question NDCG@k matrix and every pair's
    winners, losers and significance with Holm's correction (``selectors.runs_compare``)."""
    runs = [
        # The run's number first: two runs started in the same minute read the same otherwise.
        (str(pk), f"Run {pk} · {created:%Y-%m-%d %H:%M} · {name} {version or ''} · {RunStatus(status).label}")
        for pk, created, name, version, status in EvaluationRun.objects.filter(collection=collection)
        .order_by("-created_at", "-id")
        .values_list("pk", "created_at", "ranker__name", "ranker_version__label", "status")[:200]
    ]
    a_id, b_id = request.GET.get("a", ""), request.GET.get("b", "")
    run_ids = request.GET.getlist("run")
    context: dict = {
        "collection": collection,
        "runs": runs,
        "a_id": a_id,
        "b_id": b_id,
        "run_ids": run_ids,
        "max_runs": selectors.COMPARE_MAX_RUNS,
    }
    if run_ids:
        chosen = [selectors.run_in_collection(run_id=x, collection=collection) for x in run_ids]
        found = [run for run in chosen if run is not None]
        if len(found) != len(chosen) or len({run.pk for run in found}) != len(found):
            context["error"] = "Choose evaluation runs of this collection, each once."
            return render(request, "evaluation/compare.html", context, status=400)
        try:
            context["many"] = selectors.runs_compare(runs=found)
        except ValueError:
            context["error"] = (
                f"Choose {selectors.COMPARE_MIN_RUNS} to {selectors.COMPARE_MAX_RUNS} runs to compare; "
                f"you chose {len(found)}."
            )
            return render(request, "evaluation/compare.html", context, status=400)
        context["matrix_shown"] = selectors.MATRIX_SHOWN
        return render(request, "evaluation/compare.html", context)
    if a_id or b_id:
        pair = [selectors.run_in_collection(run_id=x, collection=collection) for x in (a_id, b_id)]
        if None in pair:
            context["error"] = "Choose two evaluation runs of this collection to compare (fields a and b)."
            return render(request, "evaluation/compare.html", context, status=400)
        run_a, run_b = cast(EvaluationRun, pair[0]), cast(EvaluationRun, pair[1])
        change = selectors.change_explained(run_a=run_a, run_b=run_b)
        changed = [(d, d.delta) for d in change.questions if d.delta is not None]
        winners = [d for d, delta in changed if delta > 0]
        losers = [
            d for d, delta in sorted(changed, key=lambda pair: (pair[1], pair[0].question_id)) if delta < 0
        ]
        context.update(
            run_a=run_a,
            run_b=run_b,
            change=change,
            winners=winners[:COMPARE_SHOWN],
            losers=losers[:COMPARE_SHOWN],
            winner_count=len(winners),
            loser_count=len(losers),
            shown=COMPARE_SHOWN,
            unchanged=sum(1 for _, delta in changed if delta == 0),
            unpaired=[d for d in change.questions if d.delta is None],
        )
    return render(request, "evaluation/compare.html", context)
