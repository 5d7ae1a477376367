"""Try it on a search-engine ranker's page in a real browser: htmx swaps in the mapped answers, then what
failed; the page fits a phone without scrolling sideways."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from corpus.formats.records import AnswerRecord
from corpus.models import Role
from corpus.services import answers_upsert, collection_create, membership_set
from rankers.services import ranker_create
from tests.browser.conftest import log_in
from tests.rankers.engine_support import DOCS, es_config
from tests.servers import engine_running

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def engine_ranker(transactional_db, django_user_model):
    with engine_running(DOCS) as server:
        collection = collection_create(name="Tiny", slug="tiny")
        answers_upsert(collection=collection, records=[AnswerRecord("a1", "Boundary layer", "")])
        ranker = ranker_create(
            collection=collection, name="Elasticsearch", kind="engine", config=es_config(server.url)
        )
        user = django_user_model.objects.create_user(username="tom", password="pw-tom-1234")
        membership_set(collection=collection, user=user, role=Role.TRAINER)
        yield ranker, server


def test_try_it_shows_answers_then_the_failed_mapping_part(page, live_server, engine_ranker):
    ranker, server = engine_ranker
    log_in(
        page,
        live_server,
        username="tom",
        password="pw-tom-1234",
        next_path=f"/c/tiny/rankers/{ranker.pk}/engine/",
    )

    page.get_by_label("Question").fill('boundary "layer"')
    page.get_by_test_id("try-button").click()

    expect(page.get_by_test_id("try-ok")).to_contain_text('2 answers for “boundary "layer"”')
    expect(page.locator("table.tried tbody tr")).to_have_count(2)
    expect(page.locator("table.tried tbody tr").first).to_contain_text("Boundary layer")
    assert page.url.endswith(f"/c/tiny/rankers/{ranker.pk}/engine/")  # swapped in place, no navigation

    server.faults.drop, server.faults.drop_at = "_id", 1
    page.get_by_test_id("try-button").click()

    expect(page.get_by_test_id("try-part")).to_have_text("response.hits.hits[1]._id")
    expect(page.get_by_test_id("try-ok")).to_have_count(0)


def test_engine_page_fits_a_phone(page, live_server, engine_ranker):
    ranker, _ = engine_ranker
    page.set_viewport_size({"width": 390, "height": 844})
    log_in(
        page,
        live_server,
        username="tom",
        password="pw-tom-1234",
        next_path=f"/c/tiny/rankers/{ranker.pk}/engine/",
    )

    assert page.evaluate("document.documentElement.scrollWidth") <= 390
