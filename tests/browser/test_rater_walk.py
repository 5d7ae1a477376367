"""A rater's walk in a real browser (issue 34, §4): what a rater sees and does, with DEBUG on as `make run`
has it. A refused save shows the app's own line on its card (never the raw response in place of the
page); a digit pressed right after ``n`` rates the next question; the nav and the home card speak to a
rater; long text shows its limit."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from corpus.models import Question, Split
from ratings.models import Rating
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def debug_on(settings):
    """`make run` serves with DEBUG=1; pytest-django turns it off for tests, so turn it back on (the live
    server runs in this process and reads these settings)."""
    settings.DEBUG = True


def open_question(page):
    expect(page.locator(".answer-card").first).to_be_visible()
    expect(page.locator("#rating-form")).to_have_attribute("data-ready", "true")


def test_rater_home_speaks_plainly_and_a_refused_note_shows_the_apps_line_with_debug_on(
    page, live_server, scene, rater, debug_on
):
    log_in(page, live_server)
    # The home card and the nav speak to a rater (§4.8): what to rate and the stars, no API or Tokens.
    nav = page.get_by_role("navigation", name="Main")
    expect(nav.get_by_role("link")).to_have_text(["My collections", "Evaluation"])
    expect(page.locator(".collection-card")).to_contain_text(
        "For each question you read the answers found for it and give each one stars: "
        "0 incorrect, 1 right topic, 2 good, 3 perfect."
    )
    page.get_by_role("link", name="Start rating").click()
    open_question(page)
    card = page.locator(".answer-card").first

    card.get_by_text("Add a note (optional)").click()
    # The note's limit shows as it is typed (§4.9): the field points at its counter for screen readers.
    note, counter = card.get_by_role("textbox"), card.locator(".char-count")
    expect(counter).to_have_text("0 / 500")
    expect(note).to_have_attribute("aria-describedby", f"{note.get_attribute('id')}-count")
    note.fill("x" * 600)
    expect(counter).to_have_text("500 / 500")
    expect(counter).to_have_class("char-count at-limit")
    note.fill("about a different aircraft")
    expect(counter).to_have_text("26 / 500")
    card.get_by_role("button", name="Save note").click()

    expect(card.locator(".save-state")).to_have_text(
        "Not saved: Rate the answer before adding a note to the rating."
    )
    expect(page.locator("#question-heading")).to_be_visible()  # still the rating page
    assert page.locator(".answer-card").count() == 4
    assert not Rating.objects.exists()

    # Rated, the card htmx swaps in has its note's counter too; the skip reason shows its limit.
    card.get_by_text("2 good").click()
    expect(card.locator(".save-state")).to_have_text("Saved: 2 good.")
    card.get_by_text("Add a note (optional)").click()
    expect(card.locator(".char-count")).to_have_text("0 / 500")
    page.locator("body").click(position={"x": 5, "y": 5})
    page.keyboard.press("s")
    expect(page.locator("#id_reason-count")).to_have_text("0 / 500")


def test_digit_pressed_right_after_n_rates_the_next_question(page, live_server, scene, rater, debug_on):
    second = Question.objects.create(
        collection=scene.collection, external_id="q2", text="What drag does a wing have?", split=Split.TRAIN
    )
    log_in(page, live_server)
    page.get_by_role("link", name="Start rating").click()
    open_question(page)
    first_question = int(page.locator("#rating-form").get_attribute("data-question"))

    page.keyboard.press("n")
    page.keyboard.press("2")

    expect(page.locator("#rating-form")).not_to_have_attribute("data-question", str(first_question))
    open_question(page)
    next_question = int(page.locator("#rating-form").get_attribute("data-question"))
    assert {first_question, next_question} == {scene.question.pk, second.pk}
    first_card = page.locator(".answer-card").first
    expect(first_card.locator(".save-state")).to_have_text("Saved: 2 good.")
    assert list(Rating.objects.values_list("question_id", "answer_id", "stars")) == [
        (next_question, int(first_card.get_attribute("data-answer")), 2)
    ]
