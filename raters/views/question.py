"""A question's rating page: its answers' cards (GET), the save of every rating on it without JavaScript
(POST), and skipping the question."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_http_methods, require_POST

from corpus.models import Answer, Collection, Question
from raters.forms import STAR_CHOICES, SkipForm
from raters.next_task.modes import mode_summary
from raters.next_task.picking import task_for_question
from raters.next_task.pool import top_k
from raters.next_task.table import table_note
from raters.views.access import RatingRequest, Refusal, answer_in, collection_view, question_in
from raters.views.card import Card, posted_stars
from raters.views.session import remember_task, remembered_task, session_started
from ratings.models import Rating
from ratings.selectors import rating_count_since
from ratings.services import RatingsBusy, question_skip, ratings_record


@require_http_methods(["GET", "POST"])
@collection_view()
def rate_question(request: RatingRequest, collection: Collection, question_id: int) -> HttpResponse:
    """GET: the rating task for a question. POST: the plain-form save of every rating on the page."""
    question = question_in(collection, question_id)
    if request.method == "POST":
        return _save_form(request, collection, question)
    entry = remembered_task(request, collection, question.pk)
    if entry is None:
        entry = remember_task(
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
    started = session_started(request)
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
            # The mode stays in the session (``next_question._mode``): say so, with the way back to the usual queue.
            "queue_mode": queue_mode,
            # Which candidate table serves: the previous one while a refresh runs, or term overlap.
            "table_note": table_note(collection=collection),
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
        parsed.append((answer_in(collection, int(answer_key)), posted_stars(raw)))
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
            changed.append((answer_in(collection, answer_id), current[answer_id][0], text))
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
@collection_view()
def rate_skip(request: RatingRequest, collection: Collection, question_id: int) -> HttpResponse:
    """The rater can't judge the question: record it (with the optional reason) and move on."""
    question = question_in(collection, question_id)
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
