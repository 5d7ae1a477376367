"""Trainer pages of a collection's judges: the list with a form to add one, a judge's page (settings,
trust, Test connection, judging runs with live progress), its agreement with people, and clicks beside
ratings (the production log's implicit judgments against people and the judges).

Access as on the Rankers pages: anonymous users log in first, non-members get 404, raters 403. Every
POST redirects (303) to a page that shows the outcome; htmx only polls a running judging's block.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from corpus.models import Collection
from corpus.permissions import page_collection
from evaluation.selectors.clicks import MEASURE_OF, METHODS, ClickParameters, star_mapping
from judges.clicks import PEOPLE, clicks_beside_ratings
from judges.confidence import meaning as confidence_meaning
from judges.forms import ClickParametersForm, JudgeForm, JudgingForm, TrustForm
from judges.models import Judge, JudgeKind, Judging, Selection
from judges.prompts import SCALE
from judges.selectors import agreement, judges_of, judgings_of, latest_judging
from judges.services import (
    JudgingConflict,
    JudgingUnavailable,
    judge_create,
    judge_test,
    judge_trust,
    judge_update,
    judging_cancel,
    judging_resume,
    judging_start,
)
from ubi.production_questions import production_questions_import

RUNS_SHOWN = 10
JUDGMENTS_SHOWN = 200
TEST_SESSION_KEY = "judge-test-{}"


def _managed_collection(request: HttpRequest, slug: str) -> Collection:
    """The collection if the user trains it; 404 for non-members, 403 for raters."""
    refusal = "Only trainers of this collection can manage its judges."
    return page_collection(user=request.user, slug=slug, manage=True, refusal=refusal)[0]


def _judge(collection: Collection, judge_id: int) -> Judge:
    return get_object_or_404(
        Judge.objects.select_related("account", "collection"), pk=judge_id, collection=collection
    )


def _see_other(url: str) -> HttpResponseRedirect:
    response = HttpResponseRedirect(url)
    response.status_code = 303
    return response


def _judge_url(judge: Judge) -> str:
    return reverse("judge", args=[judge.collection.slug, judge.pk])


def _errors(exc: ValidationError) -> str:
    # The services' messages are whole sentences; their field names ("selection: ...") read as code.
    return " ".join(exc.messages)


def _apply_errors(form, exc: ValidationError) -> None:
    for field, msgs in getattr(exc, "message_dict", {"__all__": exc.messages}).items():
        form.add_error(field if field in form.fields else None, msgs)


@login_required
@require_GET
def judges_page(request: HttpRequest, slug: str) -> HttpResponse:
    collection = _managed_collection(request, slug)
    return _render_list(request, collection, JudgeForm(initial={"kind": "builtin", "name": "Builtin"}))


def _render_list(
    request: HttpRequest, collection: Collection, form: JudgeForm, status: int = 200
) -> HttpResponse:
    rows = [(judge, latest_judging(judge=judge)) for judge in judges_of(collection=collection)]
    return render(
        request, "judges/judges.html", {"collection": collection, "rows": rows, "form": form}, status=status
    )


@login_required
@require_POST
def judge_new(request: HttpRequest, slug: str) -> HttpResponse:
    collection = _managed_collection(request, slug)
    form = JudgeForm(request.POST)
    if form.is_valid():
        try:
            judge = judge_create(
                collection=collection, api_key=form.api_key_value() or "", **form.setting_values()
            )
        except ValidationError as exc:
            _apply_errors(form, exc)
        else:
            messages.success(
                request, f"Judge {judge.name} added. Try it with Test connection, then judge some pairs."
            )
            return _see_other(_judge_url(judge))
    return _render_list(request, collection, form, status=400)


def _judge_context(request: HttpRequest, judge: Judge, form: JudgeForm | None = None) -> dict:
    test = request.session.pop(TEST_SESSION_KEY.format(judge.pk), None)
    return {
        "collection": judge.collection,
        "judge": judge,
        "form": form or JudgeForm(instance=judge),
        "trust_form": TrustForm(
            initial={"counts": judge.account.counts, "human_wins": judge.account.human_wins}
        ),
        # A clicks judge takes one selection: the pairs with click evidence.
        "judging_form": JudgingForm(initial={"selection": Selection.CLICKED})
        if judge.kind == JudgeKind.CLICKS
        else JudgingForm(),
        "judgings": list(judgings_of(judge=judge)[:RUNS_SHOWN]),
        "test": test,
        "scale": SCALE,
    }


@login_required
@require_GET
def judge_page(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    judge = _judge(_managed_collection(request, slug), judge_id)
    return render(request, "judges/judge.html", _judge_context(request, judge))


@login_required
@require_POST
def judge_edit(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    judge = _judge(_managed_collection(request, slug), judge_id)
    form = JudgeForm(request.POST, instance=Judge.objects.get(pk=judge.pk))
    if form.is_valid():
        try:
            judge_update(judge=judge, api_key=form.api_key_value(), **form.setting_values())
        except ValidationError as exc:
            _apply_errors(form, exc)
        else:
            messages.success(request, "Settings saved.")
            return _see_other(_judge_url(judge))
    judge.refresh_from_db()
    return render(request, "judges/judge.html", _judge_context(request, judge, form), status=400)


@login_required
@require_POST
def judge_trust_set(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    judge = _judge(_managed_collection(request, slug), judge_id)
    form = TrustForm(request.POST)
    form.is_valid()
    counts, human_wins = form.cleaned_data.get("counts", False), form.cleaned_data.get("human_wins", False)
    written = judge_trust(judge=judge, counts=counts, human_wins=human_wins)
    if counts:
        rule = "people win on pairs they rated" if human_wins else "the judge is one more rater"
        messages.success(
            request, f"{judge.name}'s ratings now count toward labels ({rule}); {written} labels updated."
        )
    else:
        messages.success(
            request, f"{judge.name}'s ratings no longer count toward labels; {written} labels updated."
        )
    return _see_other(_judge_url(judge))


@login_required
@require_POST
def judge_test_view(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    judge = _judge(_managed_collection(request, slug), judge_id)
    outcome = judge_test(judge=judge)
    request.session[TEST_SESSION_KEY.format(judge.pk)] = {
        "question": outcome.question,
        "answer": outcome.answer[:1000],
        "reply": outcome.reply,
        "stars": outcome.stars,
        "error": outcome.error,
    }
    return _see_other(_judge_url(judge) + "#test")


@login_required
@require_POST
def judging_start_view(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    judge = _judge(_managed_collection(request, slug), judge_id)
    form = JudgingForm(request.POST)
    if not form.is_valid():
        messages.error(
            request,
            " ".join(
                f"{form[f].label if f in form.fields else 'Run'}: {' '.join(str(m) for m in e)}"
                for f, e in form.errors.items()
            ),
        )
        return _see_other(_judge_url(judge) + "#runs")
    try:
        judging = judging_start(
            judge=judge,
            selection=form.cleaned_data["selection"],
            limit=form.cleaned_data["limit"],
            question_ids=form.question_id_list(),
            budget_tokens=form.cleaned_data["budget_tokens"],
            created_by=request.user,  # type: ignore[arg-type]
        )
    except (JudgingConflict, JudgingUnavailable) as exc:
        messages.error(request, str(exc))
    except ValidationError as exc:
        messages.error(request, _errors(exc))
    else:
        messages.success(request, f"Judging {judging.total} pairs with {judge.name}.")
    return _see_other(_judge_url(judge) + "#runs")


def _judging(judge: Judge, judging_id: int) -> Judging:
    return get_object_or_404(Judging, pk=judging_id, judge=judge)


@login_required
@require_POST
def judging_cancel_view(request: HttpRequest, slug: str, judge_id: int, judging_id: int) -> HttpResponse:
    judge = _judge(_managed_collection(request, slug), judge_id)
    judging = judging_cancel(judging=_judging(judge, judging_id))
    messages.success(
        request,
        "Cancelled."
        if judging.status == "cancelled"
        else "Cancelling: the run stops after its current pairs.",
    )
    return _see_other(_judge_url(judge) + "#runs")


@login_required
@require_POST
def judging_resume_view(request: HttpRequest, slug: str, judge_id: int, judging_id: int) -> HttpResponse:
    judge = _judge(_managed_collection(request, slug), judge_id)
    try:
        judging_resume(judging=_judging(judge, judging_id))
    except (JudgingConflict, JudgingUnavailable) as exc:
        messages.error(request, str(exc))
    except ValidationError as exc:
        messages.error(request, _errors(exc))
    else:
        messages.success(request, "Resumed: it judges the pairs not judged yet.")
    return _see_other(_judge_url(judge) + "#runs")


@login_required
@require_GET
def judging_progress(request: HttpRequest, slug: str, judge_id: int, judging_id: int) -> HttpResponse:
    judge = _judge(_managed_collection(request, slug), judge_id)
    judging = _judging(judge, judging_id)
    return render(
        request,
        "judges/judge.html#judging",
        {"collection": judge.collection, "judge": judge, "judging": judging},
    )


@login_required
@require_GET
def agreement_page(request: HttpRequest, slug: str, judge_id: int) -> HttpResponse:
    judge = _judge(_managed_collection(request, slug), judge_id)
    figures = agreement(judge=judge)
    rows = [(stars, counts) for stars, counts in enumerate(figures.confusion)]
    return render(
        request,
        "judges/agreement.html",
        {
            "collection": judge.collection,
            "judge": judge,
            "a": figures,
            "confusion_rows": rows,
            "confidence_help": confidence_meaning(judge.kind),
        },
    )


@login_required
@require_GET
def clicks_page(request: HttpRequest, slug: str) -> HttpResponse:
    """Clicks beside ratings: the implicit judgments' agreement with people and each judge."""
    collection = _managed_collection(request, slug)
    form = ClickParametersForm(request.GET or None)
    parameters = form.parameters() if form.is_bound and form.is_valid() else ClickParameters()
    figures = clicks_beside_ratings(collection=collection, parameters=parameters)
    return render(
        request,
        "judges/clicks.html",
        {
            "collection": collection,
            "form": form if form.is_bound else ClickParametersForm(),
            "c": figures,
            "j": figures.judgments,
            "people_default": next(
                (r for r in figures.comparisons if (r.method, r.grader) == (figures.method, PEOPLE)), None
            ),
            "application": parameters.application or collection.slug,
            "judgments_shown": figures.judgments.judgments[:JUDGMENTS_SHOWN],
            "mappings": [
                (MEASURE_OF[method], star_mapping(figures.judgments.thresholds(method))) for method in METHODS
            ],
        },
    )


@login_required
@require_POST
def clicks_questions_import(request: HttpRequest, slug: str) -> HttpResponse:
    """Add the chosen frequent production queries as questions of the collection."""
    collection = _managed_collection(request, slug)
    if not request.POST.getlist(
        "query"
    ):  # the page's words for the API's "Name at least one logged query text."
        messages.error(request, "Tick at least one query to add it as a question.")
        return _see_other(reverse("judges-clicks", args=[collection.slug]) + "#unmatched-heading")
    try:
        imported = production_questions_import(collection=collection, queries=request.POST.getlist("query"))
    except ValidationError as exc:
        messages.error(request, _errors(exc))
    else:
        n = len(imported.created)
        messages.success(
            request,
            f"Added {n} question{'s' if n != 1 else ''} from the production log"
            + (f" ({imported.already} already were questions)." if imported.already else "."),
        )
    return _see_other(reverse("judges-clicks", args=[collection.slug]))
