"""Comparing what a trainer chooses, with one chooser: two runs side by side with their winners and
losers, or 2 to 6 in a matrix with every pair's significance. A choice is a run or a version of a ranker
(any version: comparing two versions does not need either to be promoted); a version is compared through
its latest successful run, and a version without one can be ranked now against the other version
(``versions_compare``, nothing stored) or evaluated."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from corpus.models import Collection
from evaluation import selectors
from evaluation.numbers import figure, interval, p_text, percent, signed
from evaluation.selectors import Choice
from evaluation.services import VersionComparison, versions_compare
from evaluation.views.access import collection_page
from jobs import failure_reason
from rankers.base import RankerError

# Compare pages list this many winners and losers (biggest first); the counts cover all of them.
COMPARE_SHOWN = 50
# The chooser's selects: A, B, and up to COMPARE_MAX_RUNS − 2 more for the side-by-side matrix.
MORE_SELECTS = selectors.COMPARE_MAX_RUNS - 2


@dataclass(frozen=True)
class Now:
    """Two versions of one ranker ranked now on every test question (nothing stored), as shown."""

    a: Choice
    b: Choice
    comparison: VersionComparison

    @property
    def a_ndcg(self) -> str:
        return figure(self.comparison.champion_ndcg)  # A is passed as the champion, B as the challenger

    @property
    def b_ndcg(self) -> str:
        return figure(self.comparison.challenger_ndcg)

    @property
    def a_rated_share(self) -> str:
        return percent(self.comparison.champion_rated_share)

    @property
    def b_rated_share(self) -> str:
        return percent(self.comparison.challenger_rated_share)

    @property
    def difference(self) -> str:
        return signed(self.comparison.difference)

    @property
    def ci(self) -> str:
        return interval(self.comparison.ci_low, self.comparison.ci_high)

    @property
    def p(self) -> str:
        return p_text(self.comparison.p_value)


def _values(request: HttpRequest) -> tuple[list[str], bool]:
    """The values chosen, A and B first, and whether the matrix of every run was asked for (``run``
    repeated, as the dashboard's history sends; the chooser sends ``a``, ``b`` and ``more``)."""
    runs = [v for v in request.GET.getlist("run") if v.strip()]
    if runs:
        return runs, True
    pair = [request.GET.get("a", ""), request.GET.get("b", "")]
    more = [v for v in request.GET.getlist("more") if v.strip()]
    if not any(v.strip() for v in pair) and not more:
        return [], False
    return pair + more, bool(more)


def _selected(values: list[str]) -> dict:
    """What the selects show: exactly what is compared, A, B, then the more runs (empty ones to add)."""
    padded = [v.strip() for v in values] + [""] * (2 + MORE_SELECTS - len(values))
    return {"a_value": padded[0], "b_value": padded[1], "more_values": padded[2 : 2 + MORE_SELECTS]}


def _context(collection: Collection, values: list[str]) -> dict:
    return {
        "collection": collection,
        "options": selectors.compare_options(collection=collection),
        "max_runs": selectors.COMPARE_MAX_RUNS,
        **_selected(values),
    }


@collection_page(manage=True)
@require_GET
def compare(request: HttpRequest, *, collection: Collection, role: str) -> HttpResponse:
    """Compare what the chooser names (``a``, ``b``, ``more``; or ``run`` repeated): two runs side by
    side, their numbers and per-question NDCG changes, biggest winners and losers first; 3 to 6 (or
    ``run`` repeated) in the matrix with every pair's winners, losers and significance with Holm's
    correction (``selectors.runs_compare``). ``now=1`` ranks two versions of one ranker now."""
    values, many = _values(request)
    context = _context(collection, values)
    if not values:
        return render(request, "evaluation/compare.html", context)
    chosen = [selectors.choice_of(value=v, collection=collection) for v in values]
    if many and not selectors.COMPARE_MIN_RUNS <= len(chosen) <= selectors.COMPARE_MAX_RUNS:
        context["error"] = (
            f"Choose {selectors.COMPARE_MIN_RUNS} to {selectors.COMPARE_MAX_RUNS} runs to compare; "
            f"you chose {len(chosen)}."
        )
        return render(request, "evaluation/compare.html", context, status=400)
    if None in chosen:
        context["error"] = (
            "Choose evaluation runs of this collection, each once."
            if many
            else "Choose two evaluation runs of this collection, or versions of its rankers, to compare "
            "(fields a and b)."
        )
        return render(request, "evaluation/compare.html", context, status=400)
    choices: list[Choice] = [c for c in chosen if c is not None]
    if len(choices) > selectors.COMPARE_MAX_RUNS:
        context["error"] = (
            f"Choose {selectors.COMPARE_MIN_RUNS} to {selectors.COMPARE_MAX_RUNS} runs to compare; "
            f"you chose {len(choices)}."
        )
        return render(request, "evaluation/compare.html", context, status=400)
    context["choices"] = choices
    missing = [c for c in choices if c.run is None]
    if missing:
        # A version never evaluated: offer to evaluate it, or (two versions of one ranker) to rank both now.
        context["missing"] = missing
        a, b = choices[0], choices[1]
        pairable = (
            len(choices) == 2
            and a.version is not None
            and b.version is not None
            and a.version.pk != b.version.pk
            and a.version.ranker_id == b.version.ranker_id
        )
        context["can_compare_now"] = pairable
        if pairable and request.GET.get("now") == "1":
            assert a.version is not None and b.version is not None
            try:
                context["now"] = Now(a, b, versions_compare(challenger=b.version, champion=a.version))
            except RankerError as exc:
                context["now_error"] = failure_reason(exc)
        return render(request, "evaluation/compare.html", context)
    runs = [c.run for c in choices if c.run is not None]
    if len({run.pk for run in runs}) != len(runs):
        context["error"] = (
            f"A and B are the same run (run {runs[0].pk}): choose two different ones."
            if len(runs) == 2 and not many
            else "Choose evaluation runs of this collection, each once."
        )
        return render(request, "evaluation/compare.html", context, status=400)
    if many:
        context["many"] = selectors.runs_compare(runs=runs)
        context["matrix_shown"] = selectors.MATRIX_SHOWN
        # The selects in the table's order (oldest first, numbered 1, 2, ...): A is run 1, B run 2.
        value_of = {c.run.pk: c.value for c in choices if c.run is not None}
        context.update(_selected([value_of[run.pk] for run in context["many"].runs]))
        return render(request, "evaluation/compare.html", context)
    run_a, run_b = runs
    change = selectors.change_explained(run_a=run_a, run_b=run_b)
    changed = [(d, d.delta) for d in change.questions if d.delta is not None]
    winners = [d for d, delta in changed if delta > 0]
    losers = [d for d, delta in sorted(changed, key=lambda pair: (pair[1], pair[0].question_id)) if delta < 0]
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
