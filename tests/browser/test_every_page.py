"""Every page at 1280 and 390 px wide: axe-core finds no violation, the Content-Security-Policy refuses
nothing, and nothing scrolls sideways.

axe-core is vendored for the tests only (tests/browser/vendor/, see SOURCE.md) and injected into each
page; the app never serves it. The pages are those a trainer and a rater reach from the app's links, with
real data behind them: a collection with ratings (two raters 3 stars apart on one answer), a builtin
ranker and three evaluation runs, a builtin judge that has judged its questions, a search-engine ranker
answering from ``EngineServer``; and a second collection whose default ranker has a champion and a
challenger version (the "How sure are we?" page and rating in decide mode).

The main rater and trainer pages are also checked as a browser without JavaScript shows them: the
server's HTML with its scripts removed and ``<noscript>`` shown (axe itself needs JavaScript to run).

The pages are served as in production, with the policy (tests run with DEBUG=0), and checked after their
scripts ran: the dashboard's chart drawn, the API docs' operations rendered (tests/browser/test_csp.py has
the rest of the policy's checks).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import override_settings
from django.urls import reverse
from django.utils import timezone

from corpus.models import Answer, Collection, Question, Role
from corpus.services import collection_create, membership_set
from evaluation.models import EvaluationRun, RunStatus
from judges.models import Judge, JudgingStatus
from judges.services import judge_create, judging_run, judging_start
from rankers.fusion import UNTRAINED_FUSION_WEIGHTS
from rankers.models import Ranker, RankerVersion
from rankers.services import ranker_create
from ratings.services import ground_truth_import_record, rating_record
from tests.browser.conftest import CSP_LISTEN, csp_refused
from tests.conftest import user_make
from tests.evaluation.conftest import load_small_collection
from tests.evaluation.decide_scenario import Scenario, two_versions
from tests.evaluation.helpers import evaluate_inline
from tests.rankers.engine_support import DOCS, es_config
from tests.rankers.export_support import opensearch_model
from tests.ratings.conftest import Corpus
from tests.servers import engine_running
from tests.snapshots import SPAN, Snapshot
from trainer.models import Training, TrainingStatus
from trainer.services import import_rater
from ubi.models import UbiEvent, UbiQuery

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

AXE = Path(__file__).resolve().parent / "vendor" / "axe.min.js"
WIDTHS = [(1280, 800), (390, 844)]


@dataclass
class Site:
    collection: Collection
    ranker: Ranker
    first: EvaluationRun
    second: EvaluationRun
    third: EvaluationRun
    judge: Judge
    engine: Ranker
    deciding: Scenario


@pytest.fixture(scope="module")
def engine_server():
    with engine_running(DOCS) as server:
        yield server


def site_build(engine_url: str) -> Site:
    collection = load_small_collection(collection_create(name="Tiny", slug="tiny"))
    # Its labels as an import the manage page lists, with the option "answers not listed ... incorrect".
    ground_truth_import_record(
        collection=collection,
        rater=import_rater(),
        question_ids=Question.objects.filter(collection=collection).values_list("id", flat=True),
        judgments=12,
        files=["qrels.txt"],
    )
    ranker = ranker_create(collection=collection, name="BM25", kind="builtin", is_default=True)
    first = evaluate_inline(ranker)
    second = evaluate_inline(ranker)
    third = evaluate_inline(ranker)
    assert first.status == second.status == third.status == RunStatus.SUCCEEDED
    deciding = two_versions(collection_create(name="Deciding", slug="deciding"), user_make)
    for username, role in (("tina", Role.TRAINER), ("rita", Role.RATER)):
        user = get_user_model().objects.create_user(username=username, password=f"pw-{username}-123")
        membership_set(collection=collection, user=user, role=role)
        membership_set(collection=deciding.corpus.collection, user=user, role=role)
    # Rita gives 0 stars where the imported labels say 3: "Where raters disagree" has a row.
    rita = get_user_model().objects.get(username="rita")
    q1 = Question.objects.get(collection=collection, external_id="q1")
    rating_record(
        rater=rita, question=q1, answer=Answer.objects.get(collection=collection, external_id="a1"), stars=0
    )
    judge = judge_create(collection=collection, name="Builtin judge", kind="builtin")
    judging = judging_start(
        judge=judge,
        selection="questions",
        question_ids=list(
            Question.objects.filter(collection=collection).values_list("external_id", flat=True)
        ),
    )
    assert judging_run(judging_id=judging.pk, worker="test").status == JudgingStatus.SUCCEEDED
    # A production log: q1's text, a1 shown and clicked, and a query no question has (Clicks beside ratings).
    for query_id, text in (("site-1", "Boundary layer flat plate"), ("site-2", "wind tunnel noise")):
        UbiQuery.objects.create(
            query_id=query_id, application="tiny", user_query=text, timestamp=timezone.now()
        )
    for action, ordinal, object_id in (("impression", 1, "a1"), ("click", 1, "a1"), ("impression", 2, "a3")):
        UbiEvent.objects.create(event_id=uuid.uuid4(), application="tiny", action_name=action, query_id="site-1",
                                timestamp=timezone.now(), ordinal=ordinal, object_id=object_id)  # fmt: skip
    engine = ranker_create(
        collection=collection, name="Elasticsearch", kind="engine", config=es_config(engine_url)
    )
    # A version with an export model whose tree model scores below the engine alone: offered in part.
    model = opensearch_model()
    RankerVersion.objects.create(
        ranker=engine,
        label="v9",
        details={"export": {**model, "figures": {**model["figures"], "ndcg_trees_app": 0.3}}},
    )
    explained_training(ranker)
    return Site(collection, ranker, first, second, third, judge, engine, deciding)


def site_key(site: Site) -> dict[str, int]:
    runs = {"first": site.first.pk, "second": site.second.pk, "third": site.third.pk}
    return {"collection": site.collection.pk, "ranker": site.ranker.pk, **runs, "judge": site.judge.pk,
            "engine": site.engine.pk, "deciding": site.deciding.corpus.collection.pk}  # fmt: skip


def site_load(key: dict[str, int]) -> Site:
    deciding = Collection.objects.get(pk=key["deciding"])
    ranker = Ranker.objects.get(collection=deciding, name="service")
    corpus = Corpus(
        deciding,
        {a.external_id: a for a in Answer.objects.filter(collection=deciding)},
        {q.external_id: q for q in Question.objects.filter(collection=deciding)},
    )
    scenario = Scenario(corpus, ranker, ranker.versions.get(label="v3"), ranker.versions.get(label="v4"))
    runs = [EvaluationRun.objects.get(pk=key[name]) for name in ("first", "second", "third")]
    return Site(Collection.objects.get(pk=key["collection"]), Ranker.objects.get(pk=key["ranker"]), *runs,
                Judge.objects.get(pk=key["judge"]), Ranker.objects.get(pk=key["engine"]), scenario)  # fmt: skip


@pytest.fixture(scope="module")
def site_rows(engine_server, snapshots_dir, tmp_path_factory) -> Snapshot:
    """The site's rows, made once (its evaluations, judging and scenario: a second and more) and copied
    into each test's database (tests/snapshots.py), as each test built them before."""
    models = tmp_path_factory.mktemp("site-models")

    def build() -> Site:
        with override_settings(MODEL_DIR=models):
            return site_build(engine_server.url)

    return Snapshot(
        name=f"every-page-site-{engine_server.url.rsplit(':', 1)[-1]}",
        base=2 * SPAN,
        build=build,
        ready=lambda: not get_user_model().objects.exists() and not Collection.objects.exists(),
        load=site_load,
        directory=snapshots_dir,
        key=site_key,
    )


@pytest.fixture
def site(transactional_db, site_rows, settings, tmp_path) -> Site:
    settings.MODEL_DIR = tmp_path / "models"
    return site_rows.restore()


def explained_training(ranker: Ranker) -> None:
    """A finished training whose version is the untrained fusion again: the Rankers page explains it first
    (its candidates' table, its technical details), and promoting it asks for confirmation."""
    v2 = RankerVersion.objects.create(
        ranker=ranker,
        label="v2",
        method="fusion",
        label_count=777,
        details={
            "training_questions": 190,
            "complete_questions": 12,
            "unlisted_incorrect": [{"id": 1, "name": "import 1 (qrels.txt)", "questions": 12}],
            "cv_judged_only": True,
            "rated_per_question": {"k": 10, "mean": 4.0895, "under_k": 170, "to_k": 1150},
            "params": {"signals": ["bm25", "cosine"], "weights": list(UNTRAINED_FUSION_WEIGHTS)},
            "candidates": [
                {"name": "fusion", "trained": False, "cv_ndcg": 0.5697, "chosen": True, "spread": 0.01},
                {"name": "lambdamart", "trained": True, "cv_ndcg": 0.4725, "chosen": False, "spread": 0.02},
            ],
        },
        comparison={
            "k": 10,
            "questions": 5,
            "challenger_ndcg": 0.4,
            "champion_ndcg": 0.4,
            "difference": 0.0,
            "p_value": 1.0,
            "verdict": "within noise",
            "champion": "v1",
            "champion_id": ranker.champion_id,
        },
    )
    Training.objects.create(
        ranker=ranker,
        status=TrainingStatus.SUCCEEDED,
        version=v2,
        decision="kept",
        finished_at=timezone.now(),
    )


def promote_asks(page) -> None:
    """Promote a version not measured better than the champion: the confirmation page."""
    page.get_by_test_id("promote-button").click()
    page.get_by_test_id("promote-confirm").wait_for()


def try_it(page) -> None:
    """Try it on an engine ranker's page: the answers it returns are shown."""
    page.get_by_label("Question").fill("boundary layer")
    page.get_by_test_id("try-button").click()
    page.get_by_test_id("try-ok").wait_for()


def shows(*selectors: str) -> Callable:
    """Wait until the page shows each selector: the page has its real content, not an empty state."""

    def check(page) -> None:
        for selector in selectors:
            page.locator(selector).first.wait_for(state="attached")

    return check


# A page, or a page and what to do on it (or to find on it) before checking it.
Step = str | tuple[str, Callable]
# The dashboard's history chart, drawn by its script.
CHART = "#history-chart canvas, .uplot canvas"


def trainer_pages(site: Site) -> list[Step]:
    version = site.ranker.versions.get(label="v1")  # the champion (the bm25 baseline is a second version)
    question = Question.objects.get(collection=site.collection, external_id="q1")
    return [
        reverse("home"),
        reverse("rate-next", args=["tiny"]),
        (reverse("rating-progress", args=["tiny"]), shows("[data-testid=disagreements] table")),
        reverse("evaluation:index"),
        (reverse("evaluation:dashboard", args=["tiny"]), shows(CHART)),
        (reverse("evaluation:run", args=[site.second.pk]), shows("[data-testid=run-downloads] a")),
        reverse("evaluation:question", args=[site.second.pk, question.pk]),
        reverse("evaluation:compare", args=["tiny"]) + f"?a={site.first.pk}&b={site.second.pk}",
        (
            reverse("evaluation:compare", args=["tiny"])
            + f"?run={site.first.pk}&run={site.second.pk}&run={site.third.pk}",
            shows("[data-testid=compare-many]", "[data-testid=matrix] tbody tr"),
        ),
        (
            reverse("evaluation:certainty", args=["deciding"]),
            shows("[data-testid=probability-better]", "[data-testid=rate-deciding]"),
        ),
        (
            reverse("rate-next", args=["deciding"]) + "?mode=decide",
            shows("[data-testid=queue-mode]", ".answer-card"),
        ),
        (reverse("judges", args=["tiny"]), shows(f"[data-testid=judge-{site.judge.pk}]")),
        (reverse("judge", args=["tiny", site.judge.pk]), shows("[data-testid=judging-done]")),
        (
            reverse("judge-agreement", args=["tiny", site.judge.pk]),
            shows("[data-testid=confusion]", "[data-testid=systems] tbody tr"),
        ),
        (
            reverse("judges-clicks", args=["tiny"]),
            shows("[data-testid=clicks-agreement] tbody tr", "[data-testid=clicks-unmatched] tbody tr"),
        ),
        reverse("ranker-engine-new", args=["tiny"]),
        (reverse("ranker-engine", args=["tiny", site.engine.pk]), shows("#try-question")),
        (reverse("ranker-engine", args=["tiny", site.engine.pk]), try_it),
        (reverse("rankers", args=["tiny"]), shows("[data-testid=explained-candidates]")),
        (
            reverse("ranker-version", args=["tiny", site.engine.pk, site.engine.versions.get(label="v9").pk]),
            shows("[data-testid=export-not-offered]"),
        ),
        reverse("ranker-version", args=["tiny", site.ranker.pk, version.pk]),
        (
            reverse("ranker-version", args=["tiny", site.ranker.pk, site.ranker.versions.get(label="v2").pk]),
            promote_asks,
        ),
        reverse("tokens"),
        (
            reverse("collection-manage", args=["tiny"]),
            shows("form[action$='/manage/import/'] input[type=file]"),
        ),
        (reverse("collection-export", args=["tiny"]), shows("[data-testid=ground-truth] a[download]")),
        reverse("collection-new"),
        reverse("api-docs"),
        reverse("api-redoc"),
        "/no-such-page/",
    ]


def rater_pages(site: Site) -> list[Step]:
    question = Question.objects.get(collection=site.collection, external_id="q1")
    return [
        reverse("home"),
        reverse("rate-next", args=["tiny"]),
        (
            reverse("rate-next", args=["deciding"]) + "?mode=decide",
            shows("[data-testid=queue-mode]", ".answer-card"),
        ),
        (reverse("evaluation:certainty", args=["deciding"]), shows("[data-testid=rate-deciding]")),
        (reverse("evaluation:dashboard", args=["tiny"]), shows(CHART, "[data-testid=questions-waiting]")),
        reverse("rate-contribution", args=["tiny"]),  # the dashboard's card, as a page without htmx
        reverse("rating-progress", args=["tiny"]),  # 403: for trainers
        reverse("evaluation:question", args=[site.second.pk, question.pk]),  # 403: test labels
    ]


# The innermost elements reaching past the right edge (what makes the page scroll sideways), by a selector.
WIDEST = """() => {
    const width = document.documentElement.clientWidth;
    const clipped = (e) => {
        // Simplification: absolutely positioned, it escapes the overflow of unpositioned ancestors.
        if (["absolute", "fixed"].includes(getComputedStyle(e).position)) return false;
        for (let a = e.parentElement; a; a = a.parentElement) {
            if (getComputedStyle(a).overflowX !== "visible") return true;
        }
        return false;
    };
    const over = [...document.body.querySelectorAll("*")].filter(
        (e) => e.getBoundingClientRect().right > width + 0.5 && !clipped(e));
    const name = (e) => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "")
        + [...e.classList].map((c) => "." + c).join("");
    return over.filter((e) => !over.some((o) => o !== e && e.contains(o))).slice(0, 3)
        .map((e) => `${name(e.parentElement)} > ${name(e)}`).join(", ");
}"""


# What a page loads after its own load event is htmx's: the fragments of hx-trigger="load" elements (the
# dashboard's "How sure are we?"), and the requests of an action. The page is complete when none is left to
# load, under way or being swapped in (without htmx, as without JavaScript, at once). Checked against
# Playwright's "networkidle" (no request for 500 ms) on every page here: the same DOM, 0.45 s sooner a page.
# The API docs' pages render the schema they fetch themselves: their content is waited for by name.
SETTLED = """() => !window.htmx
    || !document.querySelector('[hx-trigger="load"], .htmx-request, .htmx-settling, .htmx-swapping')"""


def problems_of(page, url: str, width: int, console: list[str], action: Callable | None = None) -> list[str]:
    """What CSP refused, axe's violations and sideways scrolling of the page at ``url``, in words (none: []).
    ``console``: the page's console lines since the last page."""
    page.goto(url)
    page.wait_for_function(SETTLED)
    if "/api/docs/" in url:
        page.locator(".opblock").first.wait_for()
    if "/api/redoc/" in url:
        page.locator("[data-section-id^='operation/']").first.wait_for()
    if action is not None:
        action(page)
        page.wait_for_function(SETTLED)
    found = [f"csp {refused}" for refused in csp_refused(page, console)]
    # resultTypes: the violations in full, at most one node of the other result types (passes, incomplete,
    # inapplicable), which axe otherwise gives a selector each: a third faster (/api/redoc/: 12.6 s, 8.7 s).
    violations = page.evaluate(
        """async () => (await axe.run(document, {resultTypes: ["violations"]})).violations.map(
            (v) => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map((n) => n.target.join(" ")).join(", ")}`)"""
    )
    found += [f"axe {v}" for v in violations]
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    if scroll_width > width:
        found.append(f"scrolls sideways: {scroll_width} px wide at {width} px: {page.evaluate(WIDEST)}")
    return found


def without_scripts(route) -> None:
    """As a browser without JavaScript gets the page: no script runs, ``<noscript>`` content shows."""
    if route.request.resource_type == "script":
        route.abort()
        return
    if route.request.resource_type != "document":
        route.continue_()
        return
    response = route.fetch()
    html = re.sub(r"<script\b.*?</script>", "", response.text(), flags=re.DOTALL | re.IGNORECASE)
    html = re.sub(r"</?noscript>", "", html, flags=re.IGNORECASE)
    route.fulfill(response=response, body=html)


def visit(
    browser,
    live_server,
    width: int,
    height: int,
    username: str | None,
    paths: list[Step],
    *,
    javascript: bool = True,
):
    context = browser.new_context(viewport={"width": width, "height": height})
    context.set_default_timeout(20_000)
    # axe is in every page the context opens, before the page's own scripts: sent to chromium once, not
    # its 550 kB with each page (through Playwright's driver and chromium's protocol, a second of CPU a test).
    # Injected by the browser, it runs under the page's Content-Security-Policy, as CSP_LISTEN does.
    context.add_init_script(CSP_LISTEN)
    context.add_init_script(path=AXE)
    page = context.new_page()
    statuses: dict[str, int] = {}
    without_policy: list[str] = []

    def navigated(response) -> None:
        if response.request.is_navigation_request():
            statuses.setdefault(response.url, response.status)
            if "content-security-policy" not in response.headers:
                without_policy.append(response.url)

    page.on("response", navigated)
    console: list[str] = []
    page.on("console", lambda message: console.append(message.text))
    try:
        if username:
            page.goto(f"{live_server.url}/login/")
            page.get_by_label("Username").fill(username)
            page.get_by_label("Password").fill(f"pw-{username}-123")
            page.get_by_role("button", name="Log in").click()
            page.wait_for_url(f"{live_server.url}/")
        if not javascript:
            page.route("**/*", without_scripts)
        problems = {}
        for step in paths:
            path, action = step if isinstance(step, tuple) else (step, None)
            found = problems_of(page, live_server.url + path, width, console, action)
            if found:
                problems[path + (" after an action" if action else "")] = found
        for url in without_policy:
            problems.setdefault(url.removeprefix(live_server.url), []).append("no Content-Security-Policy")
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
    urls = [p if isinstance(p, str) else p[0] for p in paths]
    assert [p for p in urls if statuses.get(live_server.url + p, 200) >= 400] == ["/no-such-page/"]


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


def main_pages(site: Site) -> list[str]:
    """The pages raters and trainers spend their time on: rating, the dashboard, a question's results."""
    question = Question.objects.get(collection=site.collection, external_id="q1")
    return [
        reverse("rate-next", args=["tiny"]),
        reverse("rate-question", args=["tiny", question.pk]),
        reverse("evaluation:dashboard", args=["tiny"]),
        reverse("evaluation:question", args=[site.second.pk, question.pk]),
    ]


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_main_pages_without_javascript_pass_axe_and_fit(browser, live_server, site, width, height):
    paths = main_pages(site)

    problems, statuses = visit(browser, live_server, width, height, "tina", paths, javascript=False)

    assert problems == {}
    assert [statuses.get(live_server.url + p) for p in paths] == [200, 200, 200, 200]


@pytest.mark.parametrize(("width", "height"), WIDTHS)
def test_rating_page_without_javascript_passes_axe_and_fits(browser, live_server, site, width, height):
    paths = [reverse("rate-next", args=["tiny"]), reverse("rate-next", args=["deciding"]) + "?mode=decide"]

    problems, _ = visit(browser, live_server, width, height, "rita", paths, javascript=False)

    assert problems == {}
