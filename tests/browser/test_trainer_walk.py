"""A trainer's walk through the pages issue 34 §4 found wanting, in a real browser: a new collection's
dashboard leads to the form that adds a ranker (§4.3); an engine URL nobody answers at is saved with a
warning, and the Rankers page says the engine is not answering before it offers to train, in words,
never a class name or an errno (§4.4); the compare page has one chooser showing what it compares, takes
versions that were never promoted, and its tables say when they scroll sideways on a phone (§4.2)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from corpus.models import Role
from corpus.services import collection_create, membership_set
from evaluation.models import RunStatus
from rankers.services import ranker_create
from tests.browser.conftest import log_in
from tests.evaluation.conftest import load_small_collection
from tests.evaluation.helpers import evaluate_inline
from tests.servers import free_port

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PYTHON_WORDS = re.compile(r"Errno|Error:|Unavailable|Exception|Traceback")


@pytest.fixture
def new_collection(transactional_db, django_user_model):
    collection = collection_create(name="Fresh", slug="fresh")
    user = django_user_model.objects.create_user(username="tina", password="pw-tina-123")
    membership_set(collection=collection, user=user, role=Role.TRAINER)
    return collection


def test_new_collection_leads_to_the_engine_form_which_warns_of_a_closed_port(
    page, live_server, new_collection
):
    log_in(page, live_server, username="tina", password="pw-tina-123", next_path="/evaluation/c/fresh/")

    # §4.3: no ranker yet; the dashboard links the form, not "the API or the admin".
    expect(page.get_by_text("This collection has no ranker yet")).to_be_visible()
    expect(page.get_by_text("the API or the admin")).to_have_count(0)
    expect(page.get_by_role("link", name="Rankers page")).to_have_attribute("href", "/c/fresh/rankers/")
    page.get_by_test_id("add-ranker").click()
    expect(page.get_by_role("heading", name="New search-engine ranker")).to_be_visible()

    # §4.4: a port that was just bound and closed: nothing listens there.
    url = f"http://127.0.0.1:{free_port()}/answers/_search"
    page.get_by_label("Name").fill("Closed engine")
    page.get_by_label("URL", exact=True).fill(url)
    page.get_by_role("button", name=re.compile("^(Add|Save)")).click()

    warning = page.locator(".message.warning")
    expect(warning).to_have_text(
        f"Closed engine added, but the engine is not answering at {url}: it cannot be reached: the "
        "connection was refused (nothing is listening at that address and port). Start it or correct "
        "the URL, then Try it."
    )
    expect(page.get_by_role("heading", name=re.compile("^Closed engine"))).to_be_visible()  # saved

    page.get_by_role("link", name="Rankers of Fresh").click()
    notice = page.get_by_test_id("engine-silent")
    expect(notice).to_have_text(
        f"The engine is not answering at {url}: it cannot be reached: the connection was refused (nothing "
        "is listening at that address and port). A training would fail until it answers: start it, or "
        "correct the URL in its settings."
    )
    # Said before the Train button, which names it among its descriptions.
    train = page.get_by_test_id("train-button")
    assert notice.bounding_box()["y"] < train.bounding_box()["y"]
    assert "silence-" in (train.get_attribute("aria-describedby") or "")
    assert not PYTHON_WORDS.search(page.locator("main").inner_text())


@pytest.fixture
def evaluated(transactional_db, django_user_model, settings, tmp_path):
    """The small collection, its builtin ranker evaluated three times (the champion, v1), a trainer."""
    settings.MODEL_DIR = tmp_path / "models"
    collection = load_small_collection(collection_create(name="Tiny", slug="tiny"))
    ranker = ranker_create(collection=collection, name="BM25", kind="builtin", is_default=True)
    runs = [evaluate_inline(ranker) for _ in range(3)]
    assert {run.status for run in runs} == {RunStatus.SUCCEEDED}
    user = django_user_model.objects.create_user(username="tina", password="pw-tina-123")
    membership_set(collection=collection, user=user, role=Role.TRAINER)
    return ranker, runs


def test_compare_page_one_chooser_showing_what_it_compares_and_tables_that_say_they_scroll(
    page, live_server, evaluated
):
    ranker, runs = evaluated
    baseline = ranker.versions.exclude(pk=ranker.champion_id).get()  # never promoted, never evaluated
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(page, live_server, username="tina", password="pw-tina-123", next_path="/evaluation/c/tiny/")

    # Three runs chosen on the dashboard's history: the chooser shows exactly those three.
    page.get_by_text("Compare runs side by side").click()
    for run in runs:
        page.locator(f"#history-select input[value='{run.pk}']").check()
    page.get_by_role("button", name="Compare the chosen runs").click()
    page.get_by_test_id("compare-many").wait_for()
    expect(page.locator("#compare-a")).to_have_value(str(runs[0].pk))
    expect(page.locator("#compare-b")).to_have_value(str(runs[1].pk))
    expect(page.locator("#compare-more-1")).to_have_value(str(runs[2].pk))
    expect(page.locator("form[data-testid=compare-chooser]")).to_have_count(1)  # one chooser
    expect(page.locator("form")).to_have_count(2)  # it, and logging out

    # On a phone the pairs' table scrolls sideways, and says so; its region is labelled and focusable.
    region = page.get_by_role("region", name="Each pair (table)")
    # table_scroll.js adds the hint and points the region at it once the page has laid out: wait for it
    # (reading the attribute at once raced the script, and read None once in a fresh clone's run).
    expect(region).to_have_attribute("aria-describedby", re.compile(r"\S"))
    hint_id = region.get_attribute("aria-describedby")
    hint = page.locator(f"#{hint_id}")
    expect(hint).to_be_visible()
    expect(hint).to_have_text("Scroll sideways to see every column →")
    assert region.evaluate("box => box.scrollWidth > box.clientWidth")
    region.focus()
    page.keyboard.press("ArrowRight")  # the keyboard scrolls it too
    page.wait_for_function("() => document.activeElement.scrollLeft > 0")
    assert page.evaluate("document.documentElement.scrollWidth") == 390  # the page itself does not scroll
    page.set_viewport_size({"width": 1280, "height": 800})
    page.wait_for_function(f"() => document.getElementById('{hint_id}').hidden")

    # Two versions, one never promoted nor evaluated: no promotion needed, it is offered a comparison now.
    page.locator("#compare-more-1").select_option("")
    page.locator("#compare-a").select_option(f"v{ranker.champion_id}")
    page.locator("#compare-b").select_option(f"v{baseline.pk}")
    page.get_by_role("button", name="Compare", exact=True).click()
    expect(page.get_by_test_id("compare-missing")).to_contain_text(
        f"BM25 {baseline.label} has no evaluation run yet"
    )
    expect(page.get_by_test_id(f"evaluate-v{baseline.pk}")).to_be_visible()
    page.get_by_test_id("compare-now").click()
    expect(page.get_by_test_id("compare-now-result")).to_be_visible()
    expect(page.locator("#compare-a")).to_have_value(f"v{ranker.champion_id}")
    expect(page.locator("#compare-b")).to_have_value(f"v{baseline.pk}")
