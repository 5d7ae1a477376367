"""The dashboards: the collections a user may see, and one collection's dashboard.

Trainers see the headline NDCG@k with accuracy@k and its change, the history chart, then how sure we are
in plain words (the figures and tests behind it folded), what to do next, and the tables behind it
folded. Raters see the headline, their own contribution with the way to the next question, and the
chart: no versions' probabilities or statistics."""

from __future__ import annotations

from typing import Any, cast

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.views.decorators.http import require_GET

from corpus.models import Collection, Role
from corpus.selectors import collections_for_user
from evaluation import selectors
from evaluation.models import QuestionResult
from evaluation.selectors.online import running_test_note
from evaluation.views.access import collection_page
from evaluation.views.headline import Headline, change_since_previous
from rankers.models import Ranker
from rankers.online_tests import running_online_test

WORST_SHOWN = 10
# The table under the chart (and the chart without JavaScript) lists the most recent runs only.
HISTORY_TABLE_ROWS = 100


def needs_ratings_reason(result: QuestionResult, k: int) -> str:
    """Why a question needs ratings before its NDCG means much, in words."""
    if result.ndcg is None:
        return f"No known good answer yet, so it has no NDCG@{k}."
    rated = round((result.judged or 0.0) * k)
    shown = rated + result.unlabelled_in_top_k
    return f"{result.unlabelled_in_top_k} of the {shown} answers in its top {k} are unrated."


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
    """Headline NDCG@k with its change, the history chart, how sure we are, warnings and the worst questions
    (trainers); the headline, the rater's contribution and the chart (raters)."""
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
            chart_online=[m.as_json() for m in board.online_tests],
            history_rows=[(p, run_url.format(p.run_id)) for p in board.history[::-1][:HISTORY_TABLE_ROWS]],
            compare_max_runs=selectors.COMPARE_MAX_RUNS,
            history_hidden=max(0, len(board.history) - HISTORY_TABLE_ROWS),
        )
        # The queue rates for the default ranker, so "How sure are we?" (its own page, loaded into this one
        # by htmx) is about that ranker's versions. Found in the list already loaded: no query.
        default = next((r for r in rankers if r.is_default), None) or min(
            rankers, key=lambda r: (r.created_at, r.pk)
        )
        context["certainty_here"] = ranker.pk == default.pk and role == Role.TRAINER
        if role == Role.TRAINER:
            running = running_online_test(collection=collection)
            context["online_running"] = running_test_note(test=running) if running else None
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
