"""Every page at 1280 and 390 px wide: axe-core finds no violation and nothing scrolls sideways.

axe-core is vendored for the tests only (tests/browser/vendor/, see SOURCE.md) and injected into each
page; the app never serves it. The pages are those a trainer and a rater reach from the app's links, with
real data behind them: a collection with ratings, a builtin ranker and two evaluation runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from django.urls import reverse

from corpus.models import Collection, Question, Role
from corpus.services import collection_create, membership_set
from evaluation.models import EvaluationRun, RunStatus
from rankers.models import Ranker
from rankers.services import ranker_create
from tests.evaluation.conftest import load_small_collection
from tests.evaluation.helpers import evaluate_inline

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
WIDTHS = [(1280, 800), (390, 844)]


@dataclass
class Site:
    collection: Collection
    ranker: Ranker
    first: EvaluationRun
    second: EvaluationRun


@pytest.fixture
def site(transactional_db, django_user_model, settings, tmp_path) -> Site:
    settings.MODEL_DIR = tmp_path / "models"
    collection = load_small_collection(collection_create(name="Tiny", slug="tiny"))
    ranker = ranker_create(collection=collection, name="BM25", kind="builtin", is_default=True)
    first = evaluate_inline(ranker)
    second = evaluate_inline(ranker)
    assert first.status == second.status == RunStatus.SUCCEEDED
    for username, role in (("tina", Role.TRAINER), ("rita", Role.RATER)):
        user = django_user_model.objects.create_user(username=username, password=f"pw-{username}-123")
        membership_set(collection=collection, user=user, role=role)
    return Site(collection, ranker, first, second)


def trainer_pages(site: Site) -> list[str]:
    version = site.ranker.versions.get()
    question = Question.objects.get(collection=site.collection, external_id="q1")
    return [
        reverse("home"),
        reverse("rate-next", args=["tiny"]),
        reverse("rating-progress", args=["tiny"]),
        reverse("evaluation:index"),
        reverse("evaluation:dashboard", args=["tiny"]),
        reverse("evaluation:run", args=[site.second.pk]),
        reverse("evaluation:question", args=[site.second.pk, question.pk]),
        reverse("evaluation:compare", args=["tiny"]) + f"?a={site.first.pk}&b={site.second.pk}",
        reverse("rankers", args=["tiny"]),
        reverse("ranker-version", args=["tiny", site.ranker.pk, version.pk]),
        reverse("tokens"),
        reverse("collection-manage", args=["tiny"]),
        reverse("collection-new"),
        reverse("api-docs"),
        reverse("api-redoc"),
        "/no-such-page/",
    ]


def rater_pages(site: Site) -> list[str]:
    question = Question.objects.get(collection=site.collection, external_id="q1")
    return [
        reverse("home"),
        reverse("rate-next", args=["tiny"]),
        reverse("evaluation:dashboard", args=["tiny"]),
        reverse("rating-progress", args=["tiny"]),  # 403: for trainers
        reverse("evaluation:question", args=[site.second.pk, question.pk]),  # 403: test labels
    ]


def problems_of(page, url: str, width: int) -> list[str]:
    """axe's violations and sideways scrolling of the page at ``url``, in words (none: [])."""
    page.goto(url)
    page.wait_for_load_state("networkidle")
    if "/api/docs/" in url:
        page.locator(".opblock").first.wait_for()
    if "/api/redoc/" in url:
        page.locator("[data-section-id^='operation/']").first.wait_for()
    page.add_script_tag(path=str(AXE))
    violations = page.evaluate(
        """async () => (await axe.run()).violations.map(
            (v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`)"""
    )
    found = [f"axe {v}" for v in violations]
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    if scroll_width > width:
        found.append(f"scrolls sideways: {scroll_width} px wide at {width} px")
    return found


def visit(browser, live_server, width: int, height: int, username: str | None, paths: list[str]):
    # axe is injected as a script, which the app's Content-Security-Policy refuses (tests run with
    # DEBUG off): this context ignores the policy, which tests/browser/test_csp.py checks on its own.
    context = browser.new_context(viewport={"width": width, "height": height}, bypass_csp=True)
    context.set_default_timeout(20_000)
    page = context.new_page()
    statuses: dict[str, int] = {}
    page.on(
        "response",
        lambda r: statuses.setdefault(r.url, r.status) if r.request.is_navigation_request() else None,
    )
    try:
        if username:
            page.goto(f"{live_server.url}/login/")
            page.get_by_label("Username").fill(username)
            page.get_by_label("Password").fill(f"pw-{username}-123")
            page.get_by_role("button", name="Log in").click()
            page.wait_for_url(f"{live_server.url}/")
        problems = {}
        for path in paths:
            found = problems_of(page, live_server.url + path, width)
            if found:
                problems[path] = found
        return problems, statuses
    finally:
        context.close()


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_every_trainer_page_passes_axe_and_fits(browser, live_server, site, width, height):
    paths = trainer_pages(site)

    problems, statuses = visit(browser, live_server, width, height, "tina", paths)

    assert problems == {}
    # The pages were the real ones (not a login page or an error in their place).
    assert statuses[live_server.url + "/no-such-page/"] == 404
    assert [p for p in paths if statuses.get(live_server.url + p, 200) >= 400] == ["/no-such-page/"]


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_every_rater_page_and_403_passes_axe_and_fits(browser, live_server, site, width, height):
    paths = rater_pages(site)

    problems, statuses = visit(browser, live_server, width, height, "rita", paths)

    assert problems == {}
    assert [statuses[live_server.url + p] for p in paths[-2:]] == [403, 403]


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_login_page_passes_axe_and_fits(browser, live_server, site, width, height):
    problems, statuses = visit(browser, live_server, width, height, None, [reverse("login")])

    assert problems == {}
    assert statuses[live_server.url + reverse("login")] == 200
