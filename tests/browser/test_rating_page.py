"""The rating page in a real browser: keyboard, mouse, undo, a failing network, and no JavaScript at all."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from ratings.models import Rating, RatingHistory, Skip
from tests.browser.conftest import log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def open_task(page, live_server):
    log_in(page, live_server)
    page.get_by_role("link", name="Start rating").click()
    expect(page.locator(".answer-card")).to_have_count(4)
    expect(page.locator("#rating-form")).to_have_attribute("data-ready", "true")
    return page.locator(".answer-card")


def card_answer_ids(cards) -> list[int]:
    return [int(cards.nth(i).get_attribute("data-answer")) for i in range(cards.count())]


def test_keyboard_only_rates_whole_question_and_reload_keeps_every_rating(page, live_server, scene, rater):
    cards = open_task(page, live_server)
    order = card_answer_ids(cards)
    given = [3, 0, 2, 1]

    for stars in given:
        page.keyboard.press(str(stars))
    for i, stars in enumerate(given):
        expect(page.locator(f"#answer-{order[i]} .save-state")).to_have_text(re.compile(rf"^Saved: {stars} "))
    expect(page.locator("#task-progress-text")).to_have_text("4 of 4")

    page.reload()

    expect(page.locator(".answer-card")).to_have_count(4)
    expect(page.locator("#rating-form")).to_have_attribute("data-ready", "true")
    assert card_answer_ids(page.locator(".answer-card")) == order
    for answer_id, stars in zip(order, given, strict=True):
        expect(page.locator(f"#stars-{answer_id}-{stars}")).to_be_checked()
    assert dict(Rating.objects.filter(rater=rater).values_list("answer_id", "stars")) == dict(
        zip(order, given, strict=True)
    )


def test_session_count_counts_each_new_rating_in_words(page, live_server, scene, rater):
    open_task(page, live_server)
    session = page.locator("#session-count").locator("xpath=..")
    expect(session).to_contain_text("rated or changed 0 answers in this collection")

    page.keyboard.press("2")
    expect(session).to_contain_text("rated or changed 1 answer in this collection")
    page.keyboard.press("1")

    expect(session).to_contain_text("rated or changed 2 answers in this collection")


def test_keyboard_moves_with_j_k_and_arrows(page, live_server, scene, rater):
    cards = open_task(page, live_server)
    order = card_answer_ids(cards)

    page.keyboard.press("j")
    page.keyboard.press("ArrowDown")
    page.keyboard.press("k")
    page.keyboard.press("2")

    expect(page.locator(f"#answer-{order[1]} .save-state")).to_have_text("Saved: 2 good.")
    expect(page.locator(f"#answer-{order[2]}")).to_have_class(re.compile("is-current"))
    assert list(Rating.objects.values_list("answer_id", "stars")) == [(order[1], 2)]


def test_mouse_rates_and_rerates_keeping_history(page, live_server, scene, rater):
    cards = open_task(page, live_server)
    first = cards.nth(0)

    first.get_by_text("2 good").click()
    expect(first.locator(".save-state")).to_have_text("Saved: 2 good.")
    page.locator(".answer-card").nth(0).get_by_text("3 perfect").click()
    expect(page.locator(".answer-card").nth(0).locator(".save-state")).to_have_text("Saved: 3 perfect.")

    assert list(Rating.objects.values_list("stars", flat=True)) == [3]
    assert list(RatingHistory.objects.values_list("previous_stars", "new_stars")) == [(2, 3)]


def test_undo_key_takes_back_last_rating(page, live_server, scene, rater):
    cards = open_task(page, live_server)
    order = card_answer_ids(cards)
    page.keyboard.press("1")
    page.keyboard.press("3")
    expect(page.locator(f"#answer-{order[1]} .save-state")).to_have_text("Saved: 3 perfect.")

    page.keyboard.press("u")

    expect(page.locator(f"#answer-{order[1]} .save-state")).to_have_text("Undone: not rated.")
    expect(page.locator(f"#stars-{order[1]}-3")).not_to_be_checked()
    assert list(Rating.objects.values_list("answer_id", "stars")) == [(order[0], 1)]


def test_undo_button_restores_previous_rating(page, live_server, scene, rater):
    cards = open_task(page, live_server)
    first = page.locator(f"#answer-{card_answer_ids(cards)[0]}")
    first.get_by_text("1 right topic").click()
    expect(first.locator(".save-state")).to_have_text("Saved: 1 right topic.")
    first.get_by_text("0 incorrect").click()
    expect(first.locator(".save-state")).to_have_text("Saved: 0 incorrect.")

    first.get_by_role("button", name="Undo").click()

    expect(first.locator(".save-state")).to_have_text("Undone: back to 1 right topic.")
    expect(first.get_by_label("1 right topic")).to_be_checked()
    assert list(Rating.objects.values_list("stars", flat=True)) == [1]


def test_network_failure_shows_not_saved_then_retries(page, live_server, scene, rater):
    cards = open_task(page, live_server)
    target = page.locator(f"#answer-{card_answer_ids(cards)[0]}")
    failures = []
    saved_before_retry = []

    def fail_once(route):
        if not failures:
            failures.append(route.request.url)
            route.abort("internetdisconnected")
        else:
            saved_before_retry.append(Rating.objects.count())
            route.continue_()

    page.route(re.compile(r"/answers/\d+/$"), fail_once)
    # Every state the card's save line shows, as it shows it: "Not saved" stays 2 s before the retry,
    # which a poll of a loaded machine can miss; the observer does not.
    page.evaluate(
        """(id) => {
            const line = document.querySelector(`#${id} .save-state`);
            window.saveStates = [];
            new MutationObserver(() => window.saveStates.push([line.dataset.state, line.textContent.trim()]))
                .observe(line, {childList: true, characterData: true, subtree: true, attributes: true});
        }""",
        f"answer-{card_answer_ids(cards)[0]}",
    )

    page.keyboard.press("2")

    expect(target.locator(".save-state")).to_have_text("Saved: 2 good.")
    states = page.evaluate("window.saveStates")
    failed = [text for state, text in states if state == "failed"]
    assert failed and re.match(r"^Not saved: no connection to the server\.", failed[0]), states
    assert len(failures) == 1
    assert saved_before_retry == [0]  # nothing was stored by the failed save
    assert list(Rating.objects.values_list("stars", flat=True)) == [2]


def test_server_refusal_shown_on_the_card(page, live_server, scene, rater):
    cards = open_task(page, live_server)
    target = page.locator(f"#answer-{card_answer_ids(cards)[0]}")
    # The session ends in another tab: the next save is refused and says so.
    page.context.clear_cookies()

    page.keyboard.press("2")

    expect(target.locator(".save-state")).to_have_text(
        re.compile("Not saved: (You are logged out|This page's security token)")
    )
    assert Rating.objects.count() == 0


def test_skip_key_with_reason(page, live_server, scene, rater):
    open_task(page, live_server)

    page.keyboard.press("s")
    page.get_by_label("Why can't you judge it? (optional)").fill("too technical")
    page.keyboard.press("Enter")

    expect(page.get_by_role("heading", name="All done")).to_be_visible()
    assert list(Skip.objects.values_list("reason", flat=True)) == ["too technical"]


def test_without_javascript_plain_form_saves(nojs_page, live_server, scene, rater):
    page = nojs_page
    log_in(page, live_server)
    page.get_by_role("link", name="Start rating").click()
    cards = page.locator(".answer-card")
    expect(cards).to_have_count(4)
    cards.nth(0).get_by_label("3 perfect").check()
    cards.nth(1).get_by_label("0 incorrect").check()

    page.get_by_role("button", name="Save ratings").click()

    expect(page.get_by_text("Saved 2 ratings.")).to_be_visible()
    assert sorted(Rating.objects.values_list("stars", flat=True)) == [0, 3]
    expect(page.locator(".answer-card").nth(0).get_by_label("3 perfect")).to_be_checked()


def test_phone_viewport_rates_by_tapping(browser, live_server, scene, rater):
    context = browser.new_context(viewport={"width": 375, "height": 740}, has_touch=True, is_mobile=True)
    page = context.new_page()
    try:
        cards = open_task(page, live_server)
        first = cards.nth(0)
        first.get_by_text("1 right topic").tap()
        expect(first.locator(".save-state")).to_have_text("Saved: 1 right topic.")
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 375
    finally:
        context.close()
