"""The Content-Security-Policy (DEBUG=0) in chromium: pages load and run without a single violation (no
inline script, event handler, style attribute, injected <style> or eval left), and their scripts still work
under it (htmx polls, the rating page saves).

Every page a trainer and a rater reach, at two widths, is checked under the policy by
tests/browser/test_every_page.py (the chart drawn, the API docs rendered); here: the rater's pages and a
rating saved, the login and error pages, Django's admin, and the policy sent."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse
from playwright.sync_api import expect

from config.csp import POLICY, header_value
from corpus.models import Question, Role, Split
from corpus.services import membership_set
from evaluation.models import EvaluationRun, QuestionResult
from rankers.models import Ranker, RankerKind
from rankers.services import ranker_create
from tests.browser.conftest import CSP_LISTEN, csp_refused, log_in
from tests.evaluation.conftest import load_small_collection
from tests.evaluation.helpers import run_inline

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@dataclass
class Site:
    slug: str
    question: Question


@pytest.fixture
def production(settings, tmp_path):
    """DEBUG=0 as in production (the policy is sent), models under the test's directory."""
    settings.DEBUG = False
    settings.MODEL_DIR = tmp_path / "models"


def new_run(ranker: Ranker) -> EvaluationRun:
    collection = ranker.collection
    run = EvaluationRun.objects.create(
        ranker=ranker,
        collection=collection,
        ndcg_k=collection.ndcg_k,
        gain_scheme=collection.gain_scheme,
        discount=collection.discount,
        relevance_threshold=collection.relevance_threshold,
        accuracy_k=collection.accuracy_k,
    )
    return run_inline(run)  # no broker: the services the tasks call, here


@pytest.fixture
def site(production, collection, django_user_model) -> Site:
    """A rater's collection whose dashboard has two runs to draw."""
    load_small_collection(collection)
    rater = django_user_model.objects.create_user(username="rita", password="pw-rita-123")
    membership_set(collection=collection, user=rater, role=Role.RATER)
    ranker = ranker_create(collection=collection, name="BM25", kind=RankerKind.BUILTIN, is_default=True)
    runs = [new_run(ranker), new_run(ranker)]
    assert QuestionResult.objects.filter(run=runs[1]).count() == 6
    question = Question.objects.filter(collection=collection, split=Split.TEST).order_by("pk").first()
    return Site(slug=collection.slug, question=question)


def visit(page, live_server, path: str, console: list[str]) -> list[str]:
    """Load the page, let its scripts run, and return what CSP refused (events and console errors)."""
    response = page.goto(f"{live_server.url}{path}")
    assert response is not None and response.status < 400, f"{path}: {response.status if response else None}"
    assert "content-security-policy" in response.headers, path
    page.wait_for_load_state("networkidle")
    return csp_refused(page, console)


def test_admin_page_satisfies_the_csp(page, live_server, production, django_user_model):
    django_user_model.objects.create_user(username="tom", password="pw-tom-12345", is_staff=True)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.context.add_init_script(CSP_LISTEN)
    log_in(page, live_server, username="tom", password="pw-tom-12345")

    assert visit(page, live_server, reverse("admin:index"), console) == []


def test_rater_pages_satisfy_the_csp_and_a_rating_saves(page, live_server, site):
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.context.add_init_script(CSP_LISTEN)
    log_in(page, live_server)
    paths = [
        reverse("home"),
        reverse("rate-question", args=[site.slug, site.question.pk]),
        reverse("evaluation:dashboard", args=[site.slug]),
    ]
    found = {path: visit(page, live_server, path, console) for path in paths}
    assert {path: v for path, v in found.items() if v} == {}
    # The rating page's script saves a rating under the policy.
    page.goto(f"{live_server.url}{reverse('rate-question', args=[site.slug, site.question.pk])}")
    expect(page.locator("#rating-form")).to_have_attribute("data-ready", "true")
    first = page.locator(".answer-card").first
    first.get_by_label("2 good").check()
    expect(first.locator(".save-state")).to_have_text("Saved: 2 good.")
    assert csp_refused(page, console) == []
    assert get_user_model().objects.get(username="rita").ratings.count() == 1


def test_login_and_error_pages_satisfy_the_csp(page, live_server, production):
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.context.add_init_script(CSP_LISTEN)
    assert visit(page, live_server, reverse("login"), console) == []
    page.goto(f"{live_server.url}/no-such-page/")
    page.wait_for_load_state("networkidle")
    assert csp_refused(page, console) == []


def test_policy_sent_is_the_strict_one(page, live_server, production):
    response = page.goto(f"{live_server.url}{reverse('login')}")
    assert response.headers["content-security-policy"] == header_value(POLICY)
