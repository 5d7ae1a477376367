"""An answer's card on the rating page: the stars and note shown, what the last save, undo or note did, the
partial that draws it (returned on every star clicked), and the stars a post gives."""

from __future__ import annotations

from dataclasses import dataclass

from django.http import HttpResponse
from django.template.loader import get_template

from corpus.models import Answer, Collection, Question
from raters.forms import STAR_CHOICES, RatingForm
from raters.views.access import RatingRequest, Refusal
from ratings.models import STAR_WORDS


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


def card_response(
    request: RatingRequest, collection: Collection, question: Question, card: Card
) -> HttpResponse:
    # The card needs nothing from the request or the context processors (no CSRF token: htmx sends the
    # header from <body>), so it renders from a plain context; it is returned on every star clicked.
    html = get_template("raters/rate.html#answer-card").render(
        {"collection": collection, "question": question, "card": card, "star_choices": STAR_CHOICES}
    )
    return HttpResponse(html)


def posted_stars(raw: object) -> int:
    form = RatingForm({"stars": raw})
    if not form.is_valid():
        raise Refusal(400, str(form.errors["stars"][0]), "stars")
    return form.cleaned_data["stars"]
