"""The rankers pages in a real browser: the progress block follows a training live, then the page
reloads with the decision; both pages fit a phone and a laptop without scrolling sideways."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from corpus.models import Collection, Role
from corpus.services import collection_create, membership_set
from rankers.models import Ranker, RankerVersion
from rankers.services import ranker_create, version_promote
from tests.browser.conftest import log_in
from trainer.models import Training, TrainingPhase, TrainingStatus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@dataclass
class Stage:
    collection: Collection
    ranker: Ranker
    v2: RankerVersion


@pytest.fixture
def stage(transactional_db, django_user_model) -> Stage:
    collection = collection_create(name="Tiny", slug="tiny")
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")
    v2 = RankerVersion.objects.create(
        ranker=ranker,
        label="v2",
        method="lambdamart",
        uses_model=True,
        label_count=321,
        cv_ndcg_model=0.5123,
        cv_ndcg_bm25=0.4301,
        feature_importances={"bm25": 0.4, "title_coverage": 0.6},
        details={"training_questions": 30, "seconds": 3.2},
        comparison={
            "k": 10,
            "questions": 10,
            "challenger_ndcg": 0.9,
            "champion_ndcg": 0.5,
            "difference": 0.4,
            "ci_low": 0.3,
            "ci_high": 0.5,
            "p_value": 0.0001,
            "verdict": "better",
            "champion": "v1",
        },
    )
    user = django_user_model.objects.create_user(username="tom", password="pw-tom-1234")
    membership_set(collection=collection, user=user, role=Role.TRAINER)
    return Stage(collection=collection, ranker=ranker, v2=v2)


def test_progress_block_follows_the_training_and_the_page_reloads_with_the_decision(page, live_server, stage):
    training = Training.objects.create(
        ranker=stage.ranker,
        status=TrainingStatus.RUNNING,
        phase=TrainingPhase.CROSS_VALIDATE,
        progress=0.4,
        started_at=timezone.now(),
    )
    log_in(page, live_server, username="tom", password="pw-tom-1234", next_path="/c/tiny/rankers/")
    block = page.locator(f"#training-{stage.ranker.pk}")
    expect(block.get_by_test_id("training-percent")).to_have_text("40%")
    expect(page.get_by_role("button", name="Train new version")).to_be_disabled()

    Training.objects.filter(pk=training.pk).update(phase=TrainingPhase.FIT, progress=0.75)

    expect(block.get_by_test_id("training-phase")).to_have_text("Fitting the chosen model", timeout=5000)
    expect(block.get_by_test_id("training-percent")).to_have_text("75%")

    version_promote(version=stage.v2, changed_by=None, reason="v2 vs v1: better.")
    Training.objects.filter(pk=training.pk).update(
        status=TrainingStatus.SUCCEEDED,
        phase=TrainingPhase.DONE,
        progress=1.0,
        version=stage.v2,
        decision="promoted",
        decision_reason="v2 vs v1: better.",
        finished_at=timezone.now(),
    )

    expect(page.get_by_test_id("training-outcome")).to_contain_text(
        "Promoted v2: v2 vs v1: better.", timeout=5000
    )
    expect(page.get_by_role("button", name="Train new version")).to_be_enabled()
    expect(page.get_by_test_id("champion")).to_have_text("v2: LambdaMART")
    page.get_by_role("link", name="Show v2").click()
    expect(page.get_by_test_id("comparison")).to_have_text(
        "NDCG@10 on rated answers 0.900 vs 0.500 (+0.400, 95% CI +0.300 to +0.500, p < 0.001): better"
    )


@pytest.mark.parametrize("width", [390, 1280])
def test_rankers_pages_fit_the_screen_without_sideways_scrolling(browser, live_server, stage, width):
    Training.objects.create(
        ranker=stage.ranker, status=TrainingStatus.RUNNING, phase=TrainingPhase.FIT, progress=0.5
    )
    context = browser.new_context(viewport={"width": width, "height": 900})
    page = context.new_page()
    try:
        log_in(page, live_server, username="tom", password="pw-tom-1234", next_path="/c/tiny/rankers/")
        for path in ("/c/tiny/rankers/", f"/c/tiny/rankers/{stage.ranker.pk}/versions/{stage.v2.pk}/"):
            page.goto(live_server.url + path)
            overflow = page.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth"
            )
            assert (path, overflow) == (path, 0)
    finally:
        context.close()


def test_promote_with_the_keyboard(page, live_server, stage):
    log_in(
        page,
        live_server,
        username="tom",
        password="pw-tom-1234",
        next_path=f"/c/tiny/rankers/{stage.ranker.pk}/versions/{stage.v2.pk}/",
    )

    page.get_by_role("button", name="Promote v2 to champion").focus()
    page.keyboard.press("Enter")

    expect(page.locator(".messages")).to_have_text("v2 is now the champion of Built-in.")
    stage.ranker.refresh_from_db()
    assert stage.ranker.champion_id == stage.v2.pk


def test_online_test_block_keeps_the_keyboard_in_the_block_across_its_htmx_swaps(page, live_server, stage):
    url = f"/c/tiny/rankers/{stage.ranker.pk}/versions/{stage.v2.pk}/"
    log_in(page, live_server, username="tom", password="pw-tom-1234", next_path=url)
    block = page.get_by_test_id("online-test")

    block.locator("summary").focus()
    page.keyboard.press("Enter")  # opens the start form
    block.locator("input[name=share]").focus()
    page.keyboard.press("Enter")  # submits it: htmx swaps the block

    expect(page.get_by_test_id("online-stop")).to_be_visible()
    expect(page.locator("#online-heading")).to_be_focused()
    page.keyboard.press("Tab")
    expect(page.get_by_test_id("online-stop")).to_be_focused()
    page.keyboard.press("Enter")

    expect(page.get_by_test_id("online-verdict")).to_have_text(
        "No verdict: the test stopped before any interleaved query had a click."
    )
    expect(page.locator("#online-heading")).to_be_focused()
