"""Comparing runs: two side by side with their winners and losers, or 2 to 6 in a matrix with every
pair's significance."""

from __future__ import annotations

from typing import cast

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from corpus.models import Collection
from evaluation import selectors
from evaluation.models import EvaluationRun, RunStatus
from evaluation.views.access import collection_page

# Compare pages list this many winners and losers (biggest first); the counts cover all of them.
COMPARE_SHOWN = 50


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
