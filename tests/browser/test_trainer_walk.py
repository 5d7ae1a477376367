"""A trainer's walk through the pages issue 34 §4 found wanting, in a real browser: a new collection's
dashboard leads to the form that adds a ranker (§4.3); an engine URL nobody answers at is saved with a
warning, and the Rankers page says the engine is not answering before it offers to train, in words,
never a class name or an errno (§4.4)."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from corpus.models import Role
from corpus.services import collection_create, membership_set
from tests.browser.conftest import log_in
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
