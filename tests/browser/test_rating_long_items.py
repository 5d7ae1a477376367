"""Rating long items in a real browser: the question stays in view, long answers fold, a phone shows one
answer at a time with large targets, and without JavaScript "Next question" saves the choices first."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from corpus.models import Answer, Question, Role, Split
from corpus.services import collection_create, membership_set
from ratings.models import Rating
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}
LONG_BODY = " ".join(["The wing's lift grows with the angle of attack until the flow separates."] * 40)
LONG_QUESTION = (
    "How does a wing behave " + " ".join(["at high and low speeds and angles,"] * 12) + " overall?"
)


@pytest.fixture
def long_items(transactional_db, django_user_model):
    """Two questions, each with six long candidate answers sharing terms with it (no ranker: term overlap)."""
    collection = collection_create(name="Long", slug="long")
    answers = [
        Answer.objects.create(
            collection=collection,
            external_id=f"d{i}",
            title=f"Wing study {i}",
            body=f"Study {i}. {LONG_BODY}",
        )
        for i in range(1, 7)
    ]
    questions = [
        Question.objects.create(
            collection=collection, external_id="q1", text=LONG_QUESTION, split=Split.TRAIN
        ),
        Question.objects.create(
            collection=collection, external_id="q2", text="Why does a wing stall?", split=Split.TRAIN
        ),
    ]
    user = django_user_model.objects.create_user(username="rita", password="pw-rita-123")
    membership_set(collection=collection, user=user, role=Role.RATER)
    return collection, questions, answers, user


def open_first_task(page, live_server, *, javascript: bool = True):
    log_in(page, live_server)
    page.get_by_role("link", name="Start rating").click()
    expect(page.locator(".answer-card")).to_have_count(6)
    if javascript:
        expect(page.locator("#rating-form")).to_have_attribute("data-ready", "true")


def test_question_stays_in_view_while_rating_the_last_answer(page, live_server, long_items):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_first_task(page, live_server)
    last = page.locator(".answer-card").last

    last.get_by_text("2 good").click()
    expect(last.locator(".save-state")).to_have_text("Saved: 2 good.")

    assert page.evaluate("window.scrollY") > 1000
    heading = page.locator("#question-heading").bounding_box()
    assert heading is not None and 0 <= heading["y"] < 60
    expect(page.locator("#question-heading")).to_be_in_viewport()
    # The sticky header does not cover the answer being rated.
    head_bottom = page.locator("#task-head").bounding_box()
    card_top = page.locator(".answer-card.is-current .stars").bounding_box()
    assert card_top["y"] >= head_bottom["y"] + head_bottom["height"]


def test_long_question_clamped_with_a_button_showing_all_of_it(page, live_server, long_items):
    page.set_viewport_size({"width": 1280, "height": 800})
    # The long question itself: "Start rating" may serve either question first (the queue's order).
    long_question = long_items[1][0]
    log_in(page, live_server, next_path=f"/c/long/rate/{long_question.pk}/")
    expect(page.locator(".answer-card")).to_have_count(6)
    expect(page.locator("#rating-form")).to_have_attribute("data-ready", "true")
    toggle = page.get_by_role("button", name="Show the whole question")
    heading = page.locator("#question-heading")
    clamped = heading.bounding_box()["height"]

    toggle.click()

    expect(page.get_by_role("button", name="Show less of the question")).to_have_attribute(
        "aria-expanded", "true"
    )
    assert heading.bounding_box()["height"] > clamped * 1.5


def test_long_answer_folded_then_shown_with_show_more_and_kept_after_saving(page, live_server, long_items):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_first_task(page, live_server)
    card = page.locator(".answer-card").first
    body = card.locator(".answer-body")
    folded = body.bounding_box()["height"]
    assert folded < 200

    card.get_by_role("button", name="Show more").click()

    assert body.bounding_box()["height"] > 3 * folded
    card.get_by_text("3 perfect").click()
    expect(card.locator(".save-state")).to_have_text("Saved: 3 perfect.")
    # htmx replaced the card; it stays unfolded.
    expect(page.locator(".answer-card").first.get_by_role("button", name="Show less")).to_have_attribute(
        "aria-expanded", "true"
    )


def test_phone_shows_one_answer_at_a_time_with_large_targets(browser, live_server, long_items):
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        open_first_task(page, live_server)
        cards = page.locator(".answer-card")
        expect(cards.locator("visible=true")).to_have_count(1)
        assert page.evaluate("document.documentElement.scrollHeight") < 2000
        assert page.evaluate("document.documentElement.scrollWidth") == 390
        for option in cards.first.locator("label.star-option").all():
            box = option.bounding_box()
            assert box["height"] >= 48 and box["width"] >= 140
        expect(page.locator("#card-position")).to_have_text("Answer 1 of 6")

        page.get_by_role("button", name="Next answer").tap()
        expect(page.locator("#card-position")).to_have_text("Answer 2 of 6")
        expect(cards.nth(1)).to_be_visible()
        expect(cards.nth(0)).to_be_hidden()
        # An answer hidden when the page loaded is folded when it shows.
        expect(cards.nth(1).get_by_role("button", name="Show more")).to_be_visible()
        page.get_by_role("button", name="Previous answer").tap()
        expect(page.locator("#card-position")).to_have_text("Answer 1 of 6")

        # A tap on a grade saves it and brings up the next answer.
        cards.nth(0).get_by_text("1 right topic").tap()
        expect(page.locator("#card-position")).to_have_text("Answer 2 of 6")
        expect(cards.nth(0).locator(".save-state")).to_have_text("Saved: 1 right topic.")
        assert list(Rating.objects.values_list("stars", flat=True)) == [1]
        # The saved card (replaced while hidden) is folded again when the rater goes back to it.
        page.get_by_role("button", name="Previous answer").tap()
        expect(cards.nth(0).get_by_role("button", name="Show more")).to_be_visible()
        expect(cards.nth(0).get_by_label("1 right topic")).to_be_checked()

        # The last answer, rated, stays current: it stays folded (htmx's settle unfolded it, its text then
        # ran under the pager), and at the page's end its "Saved" is above the pager, not behind it.
        for _ in range(5):
            page.get_by_role("button", name="Next answer").tap()
        expect(page.locator("#card-position")).to_have_text("Answer 6 of 6")
        cards.nth(5).get_by_text("2 good").tap()
        expect(cards.nth(5).locator(".save-state")).to_have_text("Saved: 2 good.")
        settled = re.compile(r"^(?!.*htmx-(added|settling|swapping)).*$")  # htmx's settle done
        expect(cards.nth(5)).to_have_class(settled)
        expect(cards.nth(5).locator(".answer-body")).to_have_class(settled)
        assert "is-folded" in cards.nth(5).locator(".answer-body").get_attribute("class")
        page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
        saved = cards.nth(5).locator(".card-foot").bounding_box()
        assert saved["y"] + saved["height"] <= page.locator("#card-pager").bounding_box()["y"]
    finally:
        context.close()


def swipe(page, dx: int) -> None:
    """A horizontal swipe over the rating form, as touch events (Playwright has no swipe gesture)."""
    page.evaluate(
        """(dx) => {
            const form = document.getElementById("rating-form");
            const at = (x) => [new Touch({identifier: 1, target: form, clientX: x, clientY: 400})];
            form.dispatchEvent(new TouchEvent("touchstart", {changedTouches: at(200), touches: at(200), bubbles: true}));
            form.dispatchEvent(new TouchEvent("touchend", {changedTouches: at(200 + dx), touches: [], bubbles: true}));
        }""",
        dx,
    )


def test_phone_swipe_moves_between_answers(browser, live_server, long_items):
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    context.set_default_timeout(10_000)
    page = context.new_page()
    try:
        open_first_task(page, live_server)

        swipe(page, -120)
        expect(page.locator("#card-position")).to_have_text("Answer 2 of 6")
        swipe(page, -120)
        expect(page.locator("#card-position")).to_have_text("Answer 3 of 6")
        swipe(page, 120)
        expect(page.locator("#card-position")).to_have_text("Answer 2 of 6")
        swipe(page, 20)  # too short to be a swipe
        expect(page.locator("#card-position")).to_have_text("Answer 2 of 6")
    finally:
        context.close()


def test_without_javascript_next_question_keeps_the_choice_made(nojs_page, live_server, long_items):
    collection, questions, answers, user = long_items
    page = nojs_page
    open_first_task(page, live_server, javascript=False)
    first_question = int(re.search(r"/rate/(\d+)/", page.url).group(1))
    card = page.locator(".answer-card").first
    answer_id = int(card.get_attribute("data-answer"))
    # Everything shows: nothing folded, every answer on the page.
    expect(page.get_by_role("button", name="Show more")).to_have_count(0)
    expect(page.locator(".answer-card").locator("visible=true")).to_have_count(6)
    card.get_by_label("2 good").check()

    page.get_by_role("button", name="Next question").click()

    expect(page.get_by_text("Saved 1 rating of the previous question.")).to_be_visible()
    assert f"/rate/{first_question}/" not in page.url
    assert list(Rating.objects.values_list("question_id", "answer_id", "stars")) == [
        (first_question, answer_id, 2)
    ]


def test_next_question_with_a_failed_save_sends_the_form_and_loses_nothing(page, live_server, long_items):
    """With JavaScript, "Next question" is a plain link unless a save failed or is under way: then the form
    goes, which saves that choice before moving on."""
    page.set_viewport_size({"width": 1280, "height": 800})
    open_first_task(page, live_server)
    first_question = int(re.search(r"/rate/(\d+)/", page.url).group(1))
    card = page.locator(".answer-card").first
    answer_id = int(card.get_attribute("data-answer"))
    page.route(re.compile(r"/answers/\d+/$"), lambda route: route.abort("internetdisconnected"))
    card.get_by_text("3 perfect").click()
    expect(card.locator(".save-state")).to_have_attribute("data-state", "failed")
    assert Rating.objects.count() == 0

    page.keyboard.press("n")

    expect(page.get_by_text("Saved 1 rating of the previous question.")).to_be_visible()
    assert f"/rate/{first_question}/" not in page.url
    assert list(Rating.objects.values_list("question_id", "answer_id", "stars")) == [
        (first_question, answer_id, 3)
    ]


def test_next_question_after_saved_choices_is_a_plain_link(page, live_server, long_items):
    page.set_viewport_size({"width": 1280, "height": 800})
    open_first_task(page, live_server)
    first_question = int(re.search(r"/rate/(\d+)/", page.url).group(1))
    page.keyboard.press("2")
    expect(page.locator(".answer-card").first.locator(".save-state")).to_have_text("Saved: 2 good.")
    posts = []
    page.on("request", lambda r: posts.append(r.url) if r.method == "POST" else None)

    page.get_by_role("button", name="Next question").click()

    page.wait_for_url(re.compile(r"/rate/\d+/$"))
    assert f"/rate/{first_question}/" not in page.url
    assert posts == []
    expect(page.get_by_text("of the previous question")).to_have_count(0)
