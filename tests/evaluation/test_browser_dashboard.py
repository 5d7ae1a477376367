"""The dashboard in Debian's chromium (Playwright) against the live server and a real Celery worker."""

import re

import pytest

from corpus.models import Role
from evaluation.models import EvaluationRun, RunStatus
from evaluation.services import evaluation_start
from tests.evaluation.conftest import http_ranker
from tests.evaluation.helpers import run_inline
from tests.evaluation.test_services import RANKINGS
from tests.evaluation.test_tasks import wait_finished
from tests.evaluation.test_views import RANKINGS_V2

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def chromium(browser):
    """The session's chromium (tests/conftest.py), under the name these tests have used."""
    return browser


def log_in(browser, live_server, username: str, *, javascript: bool = True):
    context = browser.new_context(java_script_enabled=javascript, viewport={"width": 1100, "height": 900})
    context.set_default_timeout(20_000)
    page = context.new_page()
    page.goto(f"{live_server.url}/login/")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", f"pw-{username}")
    page.click("button[type=submit]")
    page.wait_for_url(re.compile(r".*/$"))
    return page


@pytest.fixture
def slow_service(small, fake_ranker_server, monkeypatch):
    """An http ranker answering in 0.4 s, evaluated one question at a time: the progress bar has time to show."""
    monkeypatch.setenv("EVALUATION_CONCURRENCY", "1")
    server = fake_ranker_server(rankings=RANKINGS, delay=0.4)
    ranker = http_ranker(small, server.url, name="Service")
    ranker.is_default = True
    ranker.save()
    return server, ranker


def test_run_button_shows_live_progress_then_headline_and_chart(
    chromium, live_server, make_user, slow_service, celery_worker_process
):
    server, ranker = slow_service
    make_user("tina", collection=ranker.collection, role=Role.TRAINER)
    first = wait_finished(evaluation_start(ranker=ranker, trigger="ui"), celery_worker_process)
    assert first.status == RunStatus.SUCCEEDED
    server.rankings = RANKINGS_V2

    page = log_in(chromium, live_server, "tina")
    page.click("text=Evaluation")
    page.click("text=Tiny")
    assert page.inner_text("[data-testid=headline]") == f"{first.ndcg_mean:.3f}"
    # The chart replaced the table (which is still there, folded).
    page.wait_for_selector("#history-chart canvas")
    assert page.is_visible("#history-chart")
    assert page.get_attribute(".history-table", "open") is None

    page.click("button:has-text('Run evaluation')")
    page.wait_for_selector("#run-progress progress")
    page.wait_for_selector("[data-testid=progress-count]")
    progress_text = page.inner_text("[data-testid=progress-count]")
    assert re.fullmatch(r"[0-5] of 6", progress_text), progress_text
    # When the run finishes, the page reloads with the new headline and its change.
    page.wait_for_selector("[data-testid=change]", timeout=30_000)
    second = EvaluationRun.objects.filter(ranker=ranker).order_by("-pk").first()
    assert second.status == RunStatus.SUCCEEDED
    assert page.inner_text("[data-testid=headline]") == f"{second.ndcg_mean:.3f}"
    assert second.verdict in page.inner_text("[data-testid=change]")
    assert page.locator("#history-chart canvas").count() >= 1


def test_dashboard_without_javascript_shows_history_table(
    chromium, live_server, make_user, small, fake_ranker_server
):
    ranker = http_ranker(small, fake_ranker_server(rankings=RANKINGS).url, name="Service")
    make_user("tina", collection=small, role=Role.TRAINER)
    run = run_inline(evaluation_start(ranker=ranker, trigger="ui"))
    page = log_in(chromium, live_server, "tina", javascript=False)
    page.goto(f"{live_server.url}/evaluation/c/tiny/")
    assert not page.is_visible("#history-chart")
    assert page.get_attribute(".history-table", "open") == ""
    row = page.inner_text(".history-table tbody tr")
    assert f"{run.ndcg_mean:.3f}" in row and f"{run.accuracy_mean:.3f}" in row


def test_run_progress_moves_while_the_run_runs_and_button_is_disabled(
    chromium, live_server, make_user, slow_service, celery_worker_process
):
    server, ranker = slow_service
    server.delay = 0.8  # 6 questions, one at a time: about 5 s, several polls
    make_user("tina", collection=ranker.collection, role=Role.TRAINER)
    page = log_in(chromium, live_server, "tina")
    page.goto(f"{live_server.url}/evaluation/c/tiny/")
    page.click("button:has-text('Run evaluation')")
    page.wait_for_selector("[data-testid=progress-count]")
    seen, enabled = [], []
    for _ in range(80):
        run = EvaluationRun.objects.filter(ranker=ranker).get()
        if run.is_finished:
            break
        locator = page.locator("[data-testid=progress-count]")
        if locator.count():
            count = locator.inner_text()
            if not seen or seen[-1] != count:
                seen.append(count)
            if page.is_enabled("button:has-text('Run evaluation')"):
                enabled.append(count)
        page.wait_for_timeout(100)
    # The count moved while the run ran, not only at its end.
    assert len([c for c in seen if c != "6 of 6"]) >= 2, seen
    # A second click could not start anything while it ran.
    assert enabled == []


def test_dashboard_with_runs_fits_a_phone_without_sideways_scrolling(
    chromium, live_server, make_user, small, fake_ranker_server
):
    ranker = http_ranker(small, fake_ranker_server(rankings=RANKINGS).url, name="Service")
    make_user("tina", collection=small, role=Role.TRAINER)
    run_inline(evaluation_start(ranker=ranker, trigger="ui"))
    page = log_in(chromium, live_server, "tina")
    page.set_viewport_size({"width": 390, "height": 844})

    page.goto(f"{live_server.url}/evaluation/c/tiny/")

    assert page.evaluate("document.documentElement.scrollWidth") == 390
