"""Rating pages: the rater's home, the rating task, its htmx saves, and the trainers' progress page.

Every collection page goes through ``collection_view``: anonymous users are sent to log in (htmx requests
get a 401 JSON error, since a redirect would be swapped into the card), non-members get 404 (we do not
reveal which collections exist), and pages for trainers give raters 403.

Errors are JSON ``{"error": ..., "field": ...}`` for htmx requests (the card shows the message) and a page
otherwise; nothing is stored when a request is refused.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.contrib import messages
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import get_template
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.middleware import HtmxDetails

from corpus.models import Answer, Collection, Question, Split
from corpus.permissions import can_create_collections, collection_access, collection_and_access
from corpus.selectors import collections_for_user
from raters.forms import STAR_CHOICES, RatingForm, SkipForm
from raters.next_task.budget import budget_summary
from raters.next_task.modes import MODES, mode_summary, next_mode_task
from raters.next_task.picking import Overview, next_task, rater_overview, task_for_question
from raters.next_task.pool import candidate_table, top_k
from raters.next_task.task import Task
from ratings.agreement import krippendorff_alpha
from ratings.models import STAR_WORDS, Rating
from ratings.selectors import (
    agreement_units,
    coverage_by_split,
    disagreements,
    multi_rated_ratings,
    rater_summaries,
    rating_count_since,
    rating_target,
    ratings_per_day,
)
from ratings.services import (
    RatingsBusy,
    question_skip,
    rating_note_set,
    rating_record,
    rating_undo,
    ratings_record,
)

# A task (the answers shown for a question) is kept this long in the session so reloads show the same page.
TASK_LIFETIME = timedelta(hours=12)
TASKS_KEPT = 20
SESSION_TASKS = "rating_tasks"
SESSION_STARTED = "rating_session_started"


class RatingRequest(HttpRequest):
    """What the views may rely on: a logged-in user (checked first), django-htmx's details, the role."""

    user: User
    htmx: HtmxDetails
    collection_role: str


class Refusal(Exception):
    def __init__(self, status: int, message: str, field: str | None = None):
        super().__init__(message)
        self.status, self.message, self.field = status, message, field


def _wants_json(request: RatingRequest) -> bool:
    return request.headers.get("HX-Request") == "true" or "application/json" in request.headers.get(
        "Accept", ""
    )


def _refusal_response(request: RatingRequest, refusal: Refusal) -> HttpResponse:
    if _wants_json(request):
        return JsonResponse({"error": refusal.message, "field": refusal.field}, status=refusal.status)
    return render(
        request,
        "raters/error.html",
        {"status": refusal.status, "message": refusal.message, "back": request.headers.get("Referer", "")},
        status=refusal.status,
    )


def collection_view(*, manage: bool = False) -> Callable:
    """Resolve ``slug`` to a collection the user may rate in (or manage), else refuse."""

    def decorator(view: Callable) -> Callable:
        @functools.wraps(view)
        def wrapped(request: RatingRequest, slug: str, **kwargs: object) -> HttpResponse:
            if not request.user.is_authenticated:
                if _wants_json(request):
                    return JsonResponse(
                        {"error": "You are logged out. Log in again to keep rating.", "field": None},
                        status=401,
                    )
                return redirect_to_login(request.get_full_path())
            try:
                collection, access = collection_and_access(user=request.user, slug=slug)
                if collection is None or access.role is None:
                    raise Refusal(404, f"There is no collection “{slug}” that you are a member of.")
                if manage and not access.may_manage:
                    raise Refusal(403, "Only the collection's trainers can see this page.")
                request.collection_role = access.role
                return view(request, collection, **kwargs)
            except Refusal as refusal:
                return _refusal_response(request, refusal)

        return wrapped

    return decorator


def pair_view(view: Callable) -> Callable:
    """``collection_view`` for the per-answer endpoints (the hot path: one request per star clicked).

    One query (``rating_target``) finds the answer with its collection, checks the question is in the same
    collection and reads the user's membership, which ``collection_access`` takes as read: the same rules,
    so the per-answer endpoints admit exactly whom every other collection page admits. Refusals take the
    general path so that they say exactly what ``collection_view`` would (no collection you are a member
    of, unknown question/answer).
    """

    @functools.wraps(view)
    def wrapped(request: RatingRequest, slug: str, question_id: int, answer_id: int) -> HttpResponse:
        if not request.user.is_authenticated:
            return collection_view()(view)(request, slug, question_id=question_id, answer_id=answer_id)
        target = rating_target(
            slug=slug, question_id=question_id, answer_id=answer_id, user_id=request.user.pk
        )
        role = None
        if target is not None:
            role = collection_access(
                user=request.user, collection=target.collection, member_role=target.member_role
            ).role
        if target is None or not target.question_here or role is None:
            return collection_view()(_refuse_pair)(
                request, slug, question_id=question_id, answer_id=answer_id
            )
        request.collection_role = role
        try:
            return view(request, target.collection, target.question, target.answer)
        except Refusal as refusal:
            return _refusal_response(request, refusal)

    return wrapped


def _refuse_pair(
    request: RatingRequest, collection: Collection, question_id: int, answer_id: int
) -> HttpResponse:
    _question(collection, question_id)
    _answer(collection, answer_id)
    raise Refusal(404, "Not found.")  # unreachable: pair_view only comes here when one of them is missing


def _question(collection: Collection, question_id: int) -> Question:
    question = Question.objects.filter(collection=collection, pk=question_id).first()
    if question is None:
        raise Refusal(
            404, f"Question {question_id} is not in the collection “{collection.slug}”.", "question"
        )
    return question


def _answer(collection: Collection, answer_id: int) -> Answer:
    answer = Answer.objects.filter(collection=collection, pk=answer_id).first()
    if answer is None:
        raise Refusal(404, f"Answer {answer_id} is not in the collection “{collection.slug}”.", "answer")
    return answer


def _stars(raw: object) -> int:
    form = RatingForm({"stars": raw})
    if not form.is_valid():
        raise Refusal(400, str(form.errors["stars"][0]), "stars")
    return form.cleaned_data["stars"]


def _record(request: RatingRequest, question: Question, answer: Answer, stars: int) -> Rating:
    try:
        return rating_record(rater=request.user, question=question, answer=answer, stars=stars)
    except ValidationError as error:
        field, problems = next(iter(error.message_dict.items()))
        raise Refusal(400, problems[0], field) from None


# --- tasks kept in the session --------------------------------------------------------------------


def _task_key(collection: Collection, question_id: int) -> str:
    return f"{collection.pk}:{question_id}"


def _remember_task(request: RatingRequest, collection: Collection, task: Task) -> dict:
    tasks = request.session.get(SESSION_TASKS, {})
    entry = {
        "answers": task.answer_ids,
        "reason": task.reason,
        "priority": task.priority,
        "at": timezone.now().isoformat(),
    }
    tasks[_task_key(collection, task.question_id)] = entry
    if len(tasks) > TASKS_KEPT:
        for key in sorted(tasks, key=lambda k: tasks[k]["at"])[: len(tasks) - TASKS_KEPT]:
            del tasks[key]
    request.session[SESSION_TASKS] = tasks
    return entry


def _remembered_task(request: RatingRequest, collection: Collection, question_id: int) -> dict | None:
    entry = request.session.get(SESSION_TASKS, {}).get(_task_key(collection, question_id))
    if entry is None or timezone.now() - datetime.fromisoformat(entry["at"]) > TASK_LIFETIME:
        return None
    return entry


def _session_started(request: RatingRequest) -> datetime:
    started = request.session.get(SESSION_STARTED)
    if started is None:
        started = timezone.now().isoformat()
        request.session[SESSION_STARTED] = started
    return datetime.fromisoformat(started)


# --- pages ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CollectionEntry:
    collection: Collection
    role: str | None
    overview: Overview


@require_GET
def home(request: RatingRequest) -> HttpResponse:
    if not request.user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    entries = [
        CollectionEntry(
            collection,
            collection_access(user=request.user, collection=collection).role,
            rater_overview(collection=collection, rater=request.user),
        )
        for collection in collections_for_user(user=request.user)
    ]
    return render(
        request,
        "raters/home.html",
        {"entries": entries, "can_create": can_create_collections(user=request.user)},
    )


def _mode(request: RatingRequest, collection: Collection) -> dict | None:
    """``?mode=decide`` (rate what decides the comparison of ``champion`` and ``challenger``, version ids,
    or the headline) or ``?mode=unsure`` (training questions the ranker is least sure of) stays in this
    rater's session until ``?mode=`` asks for the usual queue again."""
    key = f"rate-mode:{collection.pk}"
    if "mode" in request.GET:
        if request.GET["mode"] in MODES:
            request.session[key] = {
                "mode": request.GET["mode"],
                "champion_id": request.GET.get("champion", ""),
                "challenger_id": request.GET.get("challenger", ""),
            }
        else:
            request.session.pop(key, None)
    return request.session.get(key)


@require_GET
@collection_view()
def rate_next(request: RatingRequest, collection: Collection) -> HttpResponse:
    """Redirect to the most useful question for this rater (``?after=<id>`` passes over that question once).

    ``?split=train`` keeps this rater's queue on training questions until ``?split=`` (all) is asked for:
    the link a trainer follows when training needs more labelled training questions. ``?mode=`` picks a
    queue mode (see ``_mode``); when the mode wants nothing more, the usual queue continues.
    """
    key = f"rate-split:{collection.pk}"
    if "split" in request.GET:
        chosen = request.GET["split"]
        if chosen in (Split.TRAIN, Split.TEST):
            request.session[key] = chosen
        else:
            request.session.pop(key, None)
    split = request.session.get(key, "")
    after = request.GET.get("after", "")
    exclude = [int(after)] if after.isdigit() else []
    mode = _mode(request, collection)
    task = None
    if mode is not None:
        task = next_mode_task(collection=collection, rater=request.user, exclude=exclude, **mode)
        if task is None and exclude:
            task = next_mode_task(collection=collection, rater=request.user, **mode)
    if task is None:
        task = next_task(collection=collection, rater=request.user, exclude=exclude, split=split)
    if task is None and exclude:
        task = next_task(collection=collection, rater=request.user, split=split)
    if task is None:
        return render(
            request, "raters/done.html", {"collection": collection, "role": request.collection_role}
        )
    _remember_task(request, collection, task)
    return redirect("rate-question", slug=collection.slug, question_id=task.question_id)


@dataclass
class Card:
    answer: Answer
    stars: int | None
    state: str = ""  # "", "saved", "undone", "noted"
    note: str = ""

    @property
    def state_text(self) -> str:
        if self.state == "noted":
            return "Note saved." if self.note else "Note removed."
        if self.state == "undone":
            return f"Undone: back to {self._words()}." if self.stars is not None else "Undone: not rated."
        if self.stars is None:
            return "Not rated yet."
        return f"Saved: {self._words()}."

    def _words(self) -> str:
        return f"{self.stars} {STAR_WORDS[self.stars]}" if self.stars is not None else ""


def _card_response(
    request: RatingRequest, collection: Collection, question: Question, card: Card
) -> HttpResponse:
    # The card needs nothing from the request or the context processors (no CSRF token: htmx sends the
    # header from <body>), so it renders from a plain context; it is returned on every star clicked.
    html = get_template("raters/rate.html#answer-card").render(
        {"collection": collection, "question": question, "card": card, "star_choices": STAR_CHOICES}
    )
    return HttpResponse(html)


@require_http_methods(["GET", "POST"])
@collection_view()
def rate_question(request: RatingRequest, collection: Collection, question_id: int) -> HttpResponse:
    """GET: the rating task for a question. POST: the plain-form save of every rating on the page."""
    question = _question(collection, question_id)
    if request.method == "POST":
        return _save_form(request, collection, question)
    entry = _remembered_task(request, collection, question.pk)
    if entry is None:
        entry = _remember_task(
            request,
            collection,
            task_for_question(collection=collection, rater=request.user, question=question),
        )
    answers = Answer.objects.filter(collection=collection).in_bulk(entry["answers"])
    mine = {
        answer_id: (stars, note)
        for answer_id, stars, note in Rating.objects.filter(
            rater=request.user, question=question, answer_id__in=answers
        ).values_list("answer_id", "stars", "note")
    }
    cards = []
    for answer_id in entry["answers"]:
        if answer_id in answers:
            stars, note = mine.get(answer_id, (None, ""))
            cards.append(Card(answers[answer_id], stars, note=note))
    rated = sum(1 for card in cards if card.stars is not None)
    started = _session_started(request)
    mode = request.session.get(f"rate-mode:{collection.pk}")
    queue_mode = (
        mode_summary(
            collection=collection,
            mode=mode["mode"],
            champion_id=mode.get("champion_id"),
            challenger_id=mode.get("challenger_id"),
        )
        if mode
        else ""
    )
    return render(
        request,
        "raters/rate.html",
        {
            "collection": collection,
            "question": question,
            "cards": cards,
            "rated": rated,
            "reason": entry["reason"],
            "star_choices": STAR_CHOICES,
            "page_size": top_k(collection=collection),
            "session_count": rating_count_since(rater=request.user, collection=collection, since=started),
            "skip_form": SkipForm(),
            # The mode stays in the session (``_mode``): say so, with the way back to the usual queue.
            "queue_mode": queue_mode,
        },
    )


def _submitted_notes(request: RatingRequest) -> dict[int, str]:
    """The ``note-<answer id>`` fields of a post, stripped (ids that are not numbers are refused)."""
    notes = {}
    for key in request.POST:
        if key.startswith("note-"):
            answer_key = key.removeprefix("note-")
            if not answer_key.isdigit():
                raise Refusal(400, f"“{answer_key}” is not an answer id.", "answer")
            notes[int(answer_key)] = request.POST[key].strip()
    return notes


def _save_form(request: RatingRequest, collection: Collection, question: Question) -> HttpResponse:
    """Without JavaScript the whole page is one form: fields ``stars-<answer id>`` and
    ``note-<answer id>``; all saved or none.

    Its "Next question" button sends the same form with ``then=next``: the choices made on the page are
    saved first (none is fine), then the rater goes on to the next question, so moving on loses nothing.
    """
    then_next = request.POST.get("then") == "next"
    submitted = [
        (key.removeprefix("stars-"), request.POST[key]) for key in request.POST if key.startswith("stars-")
    ]
    if not submitted and then_next:
        return redirect(reverse("rate-next", args=[collection.slug]) + f"?after={question.pk}")
    if not submitted:
        raise Refusal(
            400, "Choose a rating from 0 (incorrect) to 3 (perfect) for at least one answer.", "stars"
        )
    parsed = []
    for answer_key, raw in submitted:
        if not answer_key.isdigit():
            raise Refusal(400, f"“{answer_key}” is not an answer id.", "answer")
        parsed.append((_answer(collection, int(answer_key)), _stars(raw)))
    notes = _submitted_notes(request)
    current = {
        answer_id: (stars, note)
        for answer_id, stars, note in Rating.objects.filter(
            rater=request.user, question=question
        ).values_list("answer_id", "stars", "note")
    }
    rated = {answer.pk for answer, _ in parsed}
    for answer_id, text in notes.items():
        if text and answer_id not in rated and answer_id not in current:
            raise Refusal(400, "Rate the answer before adding a note to the rating.", "note")
    changed = []
    for answer, stars in parsed:
        before_stars, before_note = current.get(answer.pk, (None, ""))
        submitted_note = notes.get(answer.pk)
        new_note = submitted_note if submitted_note is not None and submitted_note != before_note else None
        if before_stars != stars or new_note is not None:
            changed.append((answer, stars, new_note))
    for answer_id, text in notes.items():
        # A note changed on a rating whose stars the post did not carry keeps the stars it has.
        if answer_id not in rated and answer_id in current and text != current[answer_id][1]:
            changed.append((_answer(collection, answer_id), current[answer_id][0], text))
    # One transaction, pairs locked in one fixed order (the page's order is shuffled per rater), retried
    # if the database aborts it anyway (``ratings_record``).
    try:
        ratings_record(
            rater=request.user,
            ratings=[(question, a, stars) for a, stars, _ in changed],
            notes=[note for _, _, note in changed],
        )
    except ValidationError as error:
        field, problems = next(iter(error.message_dict.items()))
        raise Refusal(400, problems[0], field) from None
    except RatingsBusy:
        raise Refusal(
            503,
            "Others were saving ratings of the same answers at the same moment; nothing was saved. "
            "Send the form again.",
            None,
        ) from None
    count = len(changed)
    if then_next:
        if count:
            messages.success(
                request, f"Saved {count} rating{'s' if count != 1 else ''} of the previous question."
            )
        return redirect(reverse("rate-next", args=[collection.slug]) + f"?after={question.pk}")
    messages.success(
        request,
        f"Saved {count} rating{'s' if count != 1 else ''}." if count else "Your ratings were already saved.",
    )
    return redirect("rate-question", slug=collection.slug, question_id=question.pk)


@require_POST
@pair_view
def rate_answer(
    request: RatingRequest, collection: Collection, question: Question, answer: Answer
) -> HttpResponse:
    """Save one rating (htmx: returns the answer's card; plain post: back to the question)."""
    stars = _stars(request.POST.get(f"stars-{answer.pk}", request.POST.get("stars")))
    rating = _record(request, question, answer, stars)
    if request.htmx:
        return _card_response(request, collection, question, Card(answer, rating.stars, "saved", rating.note))
    messages.success(request, f"Saved: {rating.stars} {STAR_WORDS[rating.stars]}.")
    return redirect(reverse("rate-question", args=[collection.slug, question.pk]) + f"#answer-{answer.pk}")


@require_POST
@pair_view
def rate_undo(
    request: RatingRequest, collection: Collection, question: Question, answer: Answer
) -> HttpResponse:
    """Take back the rater's last change to the pair."""
    rating = rating_undo(rater=request.user, question=question, answer=answer)
    stars = rating.stars if rating else None
    card = Card(answer, stars, "undone", rating.note if rating else "")
    if request.htmx:
        return _card_response(request, collection, question, card)
    messages.success(request, card.state_text)
    return redirect(reverse("rate-question", args=[collection.slug, question.pk]) + f"#answer-{answer.pk}")


@require_POST
@pair_view
def rate_note(
    request: RatingRequest, collection: Collection, question: Question, answer: Answer
) -> HttpResponse:
    """Set the note on the rater's rating of the answer (htmx: returns the card; plain post: back)."""
    note = request.POST.get(f"note-{answer.pk}", request.POST.get("note", ""))
    try:
        rating = rating_note_set(rater=request.user, question=question, answer=answer, note=note)
    except ValidationError as error:
        field, problems = next(iter(error.message_dict.items()))
        raise Refusal(400, problems[0], field) from None
    card = Card(answer, rating.stars, "noted", rating.note)
    if request.htmx:
        return _card_response(request, collection, question, card)
    messages.success(request, card.state_text)
    return redirect(reverse("rate-question", args=[collection.slug, question.pk]) + f"#answer-{answer.pk}")


@require_POST
@collection_view()
def rate_skip(request: RatingRequest, collection: Collection, question_id: int) -> HttpResponse:
    """The rater can't judge the question: record it (with the optional reason) and move on."""
    question = _question(collection, question_id)
    form = SkipForm(request.POST)
    if not form.is_valid():
        raise Refusal(400, str(form.errors["reason"][0]), "reason")
    try:
        question_skip(rater=request.user, question=question, reason=form.cleaned_data["reason"])
    except ValidationError as error:
        field, problems = next(iter(error.message_dict.items()))
        raise Refusal(400, problems[0], field) from None
    messages.info(request, "Skipped the question. It won't be offered to you again.")
    target = reverse("rate-next", args=[collection.slug])
    if request.htmx:
        response = HttpResponse(status=204)
        response["HX-Redirect"] = target
        return response
    return redirect(target)


@require_GET
@collection_view(manage=True)
def training_progress(request: RatingRequest, collection: Collection) -> HttpResponse:
    """Trainers: ratings per day and per rater, coverage of train and test, agreement and leniency."""
    shared = multi_rated_ratings(collection=collection)
    units = agreement_units(ratings=shared)
    alpha = krippendorff_alpha(units, level="ordinal")
    disagreement_count, disagreeing = disagreements(collection=collection)
    return render(
        request,
        "raters/progress.html",
        {
            "collection": collection,
            "per_day": ratings_per_day(collection=collection),
            "raters": rater_summaries(collection=collection, ratings=shared),
            "coverage": coverage_by_split(
                collection=collection, candidates=candidate_table(collection=collection)
            ),
            "alpha": alpha,
            "disagreement_count": disagreement_count,
            "disagreements": disagreeing,
            "alpha_pairs": len(units),
            "alpha_ratings": sum(len(u) for u in units),
            "k": top_k(collection=collection),
            "budget": budget_summary(collection=collection),
        },
    )


def csrf_failure(request: RatingRequest, reason: str = "") -> HttpResponse:
    """CSRF_FAILURE_VIEW: a clear 403 (JSON for htmx requests); nothing was stored."""
    message = "This page's security token is missing or out of date, so nothing was saved. Reload the page and try again."
    if _wants_json(request):
        return JsonResponse({"error": message, "field": "csrfmiddlewaretoken"}, status=403)
    return render(request, "raters/error.html", {"status": 403, "message": message, "back": ""}, status=403)
