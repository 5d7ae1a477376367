"""The dashboard as the person looking at it sees it, in chromium at 1280×800 and 390×844.

A trainer finds the headline, its history chart and accuracy@5 within the first two screens (1,600 px at
1280×800) before opening anything; how sure we are comes after, in plain words, and the statistics
(bounds, probabilities, the paired randomization test, the bootstrap interval) stay folded until a
disclosure is opened. A rater finds the headline, their own contribution with what waits for them, and
the link to the next question; no versions' probabilities or statistics anywhere in the page.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from corpus.models import Answer, Question, Role
from corpus.services import collection_create, membership_set
from evaluation.models import RunStatus
from rankers.services import ranker_create
from ratings.services import rating_record
from tests.evaluation.conftest import load_small_collection
from tests.evaluation.helpers import evaluate_inline

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WIDTHS = [(1280, 800), (390, 844)]
TWO_SCREENS = 1600  # at 1280×800
# Everything htmx loads after the page has arrived. A function, not an expression: the page's
# Content-Security-Policy refuses eval.
SETTLED = (
    """() => !document.querySelector('[hx-trigger="load"], .htmx-request, .htmx-settling, .htmx-swapping')"""
)
# What a non-expert should not meet before asking for it (matched case-insensitively, as shown). The change
# line's verdict keeps its p-value beside it for trainers ("within noise, p = 0.500", as on the compare page).
STATISTICS = ["randomization", "bootstrap", "Holm", "probability", "confidence interval"]


@pytest.fixture
def dashboard(transactional_db, django_user_model, settings, tmp_path):
    """A builtin ranker (champion v1 and the bm25 baseline) evaluated twice, a rating between the runs
    (the change line has both parts), a trainer and a rater who has rated one answer."""
    settings.MODEL_DIR = tmp_path / "models"
    collection = load_small_collection(collection_create(name="Tiny", slug="tiny"))
    ranker = ranker_create(collection=collection, name="BM25", kind="builtin", is_default=True)
    first = evaluate_inline(ranker)
    users = {}
    for username, role in (("tina", Role.TRAINER), ("rita", Role.RATER)):
        users[username] = django_user_model.objects.create_user(
            username=username, password=f"pw-{username}-123"
        )
        membership_set(collection=collection, user=users[username], role=role)
    rating_record(
        rater=users["rita"],
        question=Question.objects.get(collection=collection, external_id="q1"),
        answer=Answer.objects.get(collection=collection, external_id="a3"),
        stars=2,
    )
    second = evaluate_inline(ranker)
    assert first.status == second.status == RunStatus.SUCCEEDED
    return second


def open_dashboard(browser, live_server, username: str, width: int, height: int):
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(f"pw-{username}-123")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{live_server.url}/")
    page.goto(f"{live_server.url}/evaluation/c/tiny/")
    page.locator("#history-chart canvas").first.wait_for()
    # What htmx brings after the load: the trainer's "How sure are we?", the rater's waiting questions.
    page.wait_for_function(SETTLED)
    return context, page


def page_bottom(page, selector: str) -> float:
    """Where the element ends, in px from the top of the page."""
    return page.locator(selector).first.evaluate("(e) => e.getBoundingClientRect().bottom + window.scrollY")


def shown_statistics(page) -> list[str]:
    """The STATISTICS words in the text a reader sees now (folded disclosures are not rendered)."""
    shown = page.evaluate("document.body.innerText").lower()
    return [word for word in STATISTICS if word.lower() in shown]


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_trainer_sees_headline_history_and_accuracy_first_and_statistics_only_when_asked(
    browser, live_server, dashboard, width, height
):
    context, page = open_dashboard(browser, live_server, "tina", width, height)
    try:
        expect(page.get_by_test_id("headline")).to_have_text(f"{dashboard.ndcg_mean:.3f}")
        accuracy = page.locator(".headline dt", has_text="Accuracy@5")
        expect(accuracy.locator("xpath=following-sibling::dd[1]")).to_have_text(
            f"{dashboard.accuracy_mean:.3f}"
        )
        ends = {
            "headline": page_bottom(page, "[data-testid=headline]"),
            "accuracy@5": page_bottom(page, ".headline .figures dd"),
            "history chart": page_bottom(page, "#history-chart"),
        }
        height_before = page.evaluate("document.documentElement.scrollHeight")
        print(f"{width}x{height}: ends {ends}, page {height_before} px")
        if width == 1280:
            assert max(ends.values()) <= TWO_SCREENS, ends
        # How sure we are comes after the history, in plain words; its figures are folded.
        plain = page.get_by_test_id("certainty-plain")
        expect(plain).to_be_visible()
        assert page_bottom(page, "#history-chart") < page_bottom(page, "[data-testid=certainty-plain]")
        assert re.search(r"(score may still change|would hardly change|will not change)", plain.inner_text())
        assert shown_statistics(page) == []

        page.get_by_text("The figures behind this, and how they are worked out").click()
        expect(page.get_by_test_id("probability-better")).to_be_visible()
        expect(page.locator(".certainty-figures").get_by_text("paired randomization test")).to_be_visible()
        page.get_by_text("How NDCG@10 is worked out, and its margin of error").click()
        expect(page.get_by_text("bootstrap over", exact=False)).to_be_visible()
        page.get_by_text("How this change is split, and how sure it is").click()
        assert {"randomization", "bootstrap", "probability", "confidence interval"} <= set(
            shown_statistics(page)
        )
        # The tables behind the headline open in place.
        expect(page.locator("#recent-runs table")).to_be_hidden()
        page.get_by_text("Recent runs (2)").click()
        expect(page.locator("#recent-runs tbody tr")).to_have_count(2)
        assert page.evaluate("document.documentElement.scrollWidth") == width
    finally:
        context.close()


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_rater_sees_headline_own_contribution_and_next_question_not_statistics(
    browser, live_server, dashboard, width, height
):
    context, page = open_dashboard(browser, live_server, "rita", width, height)
    try:
        expect(page.get_by_test_id("headline")).to_have_text(f"{dashboard.ndcg_mean:.3f}")
        expect(page.get_by_test_id("contribution")).to_contain_text(
            "You have rated 1 answer in this collection, 1 of them in the last 7 days."
        )
        waiting = page.get_by_test_id("questions-waiting")
        expect(waiting).to_be_visible()
        assert re.fullmatch(r"\d+ questions?", waiting.inner_text())
        link = page.get_by_role("link", name="Rate the next question")
        expect(link).to_be_visible()
        if width == 1280:
            assert page_bottom(page, "[data-testid=rate-next-question]") <= TWO_SCREENS
        html = page.content()
        assert "Probability" not in html and "randomization" not in html
        assert "How sure are we?" not in html
        assert shown_statistics(page) == []
        assert "p = " not in page.evaluate("document.body.innerText")
        print(f"{width}x{height}: page {page.evaluate('document.documentElement.scrollHeight')} px")
        assert page.evaluate("document.documentElement.scrollWidth") == width

        link.click()
        page.wait_for_url(re.compile(r"/c/tiny/rate/\d+/"))
        expect(page.locator(".answer-card").first).to_be_visible()
    finally:
        context.close()
