"""The Content-Security-Policy (DEBUG=0) in chromium: every main page loads and runs without a single
violation (no inline script, event handler, style attribute, injected <style> or eval left), and the
pages' scripts still work under it (the chart draws, htmx polls, the rating page saves)."""

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
from tests.browser.conftest import log_in
from tests.evaluation.conftest import load_small_collection
from tests.evaluation.helpers import run_inline

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

# Runs in every page before its own scripts; CSP cannot block it (the browser injects it).
LISTEN = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) =>
  window.__csp.push(`${e.violatedDirective} blocked ${e.blockedURI || "inline"} at ${e.sourceFile}:${e.lineNumber}`));
"""


@dataclass
class Site:
    slug: str
    ranker: Ranker
    runs: list[EvaluationRun]
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
    load_small_collection(collection)
    trainer = django_user_model.objects.create_user(username="tom", password="pw-tom-12345", is_staff=True)
    membership_set(collection=collection, user=trainer, role=Role.TRAINER)
    rater = django_user_model.objects.create_user(username="rita", password="pw-rita-123")
    membership_set(collection=collection, user=rater, role=Role.RATER)
    from rankers.services import ranker_create

    ranker = ranker_create(collection=collection, name="BM25", kind=RankerKind.BUILTIN, is_default=True)
    runs = [new_run(ranker), new_run(ranker)]
    assert QuestionResult.objects.filter(run=runs[1]).count() == 6
    question = Question.objects.filter(collection=collection, split=Split.TEST).order_by("pk").first()
    return Site(slug=collection.slug, ranker=ranker, runs=runs, question=question)


def violations(page) -> list[str]:
    return page.evaluate("window.__csp")


def visit(page, live_server, path: str, console: list[str], shows: str | None = None) -> list[str]:
    """Load the page, let its scripts run (until the page shows ``shows``, a selector, if given), and
    return what CSP refused (events and console errors)."""
    response = page.goto(f"{live_server.url}{path}")
    assert response is not None and response.status < 400, f"{path}: {response.status if response else None}"
    assert "content-security-policy" in response.headers, path
    page.wait_for_load_state("networkidle")
    if shows is not None:
        page.locator(shows).first.wait_for()
    refused = violations(page) + [m for m in console if "Content Security Policy" in m]
    console.clear()
    return refused


def test_trainer_pages_satisfy_the_csp(page, live_server, site):
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.context.add_init_script(LISTEN)
    log_in(page, live_server, username="tom", password="pw-tom-12345")
    first, second = site.runs
    version = site.ranker.champion
    paths = [
        reverse("home"),
        reverse("evaluation:index"),
        reverse("evaluation:dashboard", args=[site.slug]),
        reverse("evaluation:run", args=[second.pk]),
        reverse("evaluation:question", args=[second.pk, site.question.pk]),
        reverse("evaluation:compare", args=[site.slug]) + f"?a={first.pk}&b={second.pk}",
        reverse("rankers", args=[site.slug]),
        reverse("ranker-version", args=[site.slug, site.ranker.pk, version.pk]),
        reverse("collection-manage", args=[site.slug]),
        reverse("rating-progress", args=[site.slug]),
        reverse("tokens"),
        reverse("evaluation:certainty", args=[site.slug]),
        reverse("ranker-engine-new", args=[site.slug]),
        reverse("admin:index"),
        "/api/docs/",
        "/api/redoc/",
    ]
    # The scripts run under the policy: the dashboard draws its chart, the docs render their operations.
    drawn = {
        reverse("evaluation:dashboard", args=[site.slug]): "#history-chart canvas, .uplot canvas",
        "/api/redoc/": "[data-section-id^='operation/']",
        "/api/docs/": ".opblock",
    }
    found = {path: visit(page, live_server, path, console, drawn.get(path)) for path in paths}
    # The one refusal by design: ReDoc's attribution logo from its CDN (the docs load nothing from outside).
    outside = "https://cdn.redoc.ly/redoc/logo-mini.svg"
    found["/api/redoc/"] = [v for v in found["/api/redoc/"] if outside not in v]
    assert {path: v for path, v in found.items() if v} == {}


def test_rater_pages_satisfy_the_csp_and_a_rating_saves(page, live_server, site):
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.context.add_init_script(LISTEN)
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
    assert violations(page) == []
    assert get_user_model().objects.get(username="rita").ratings.count() == 1


def test_login_and_error_pages_satisfy_the_csp(page, live_server, production):
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    page.context.add_init_script(LISTEN)
    assert visit(page, live_server, reverse("login"), console) == []
    page.goto(f"{live_server.url}/no-such-page/")
    page.wait_for_load_state("networkidle")
    assert violations(page) == []
    assert [m for m in console if "Content Security Policy" in m] == []


def test_policy_sent_is_the_strict_one(page, live_server, production):
    response = page.goto(f"{live_server.url}{reverse('login')}")
    assert response.headers["content-security-policy"] == header_value(POLICY)
