"""One answer of a question (htmx, or a plain post back to the question): rate it, undo the last change,
set the note. The hot path: one request per star clicked."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_POST

from corpus.models import Answer, Collection, Question
from raters.views.access import RatingRequest, Refusal, pair_view
from raters.views.card import Card, card_response, posted_stars
from ratings.models import STAR_WORDS, Rating
from ratings.services import rating_note_set, rating_record, rating_undo


def _record(request: RatingRequest, question: Question, answer: Answer, stars: int) -> Rating:
    try:
        return rating_record(rater=request.user, question=question, answer=answer, stars=stars)
    except ValidationError as error:
        field, problems = next(iter(error.message_dict.items()))
        raise Refusal(400, problems[0], field) from None


@require_POST
@pair_view
def rate_answer(
    request: RatingRequest, collection: Collection, question: Question, answer: Answer
) -> HttpResponse:
    """Save one rating (htmx: returns the answer's card; plain post: back to the question)."""
    stars = posted_stars(request.POST.get(f"stars-{answer.pk}", request.POST.get("stars")))
    rating = _record(request, question, answer, stars)
    if request.htmx:
        return card_response(request, collection, question, Card(answer, rating.stars, "saved", rating.note))
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
        return card_response(request, collection, question, card)
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
        return card_response(request, collection, question, card)
    messages.success(request, card.state_text)
    return redirect(reverse("rate-question", args=[collection.slug, question.pk]) + f"#answer-{answer.pk}")
