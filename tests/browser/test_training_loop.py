"""The whole loop in a browser, with a real worker: a rater rates a training question from the queue kept
to training questions, a trainer presses Train, follows the progress, gets the decision, opens the new
version, and the promoted version's evaluation lands on the dashboard. The Rankers page then says first
what the training tried and kept, and rolling back to v1, not measured better than v2, asks first."""

from __future__ import annotations

import time

import pytest
from playwright.sync_api import expect

from corpus.models import Role
from corpus.services import membership_set
from evaluation.models import EvaluationRun, RunStatus
from rankers.services import ranker_create
from ratings.models import Rating
from tests.browser.conftest import log_in
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import learnable_collection

pytestmark = [pytest.mark.browser, pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_rate_train_watch_decide_and_evaluate(
    browser, live_server, model_dir, celery_worker_process, django_user_model
):
    data = learnable_collection()
    ranker = ranker_create(collection=data.collection, name="Built-in", kind="builtin", is_default=True)
    for username, role in (("rita", Role.RATER), ("tom", Role.TRAINER)):
        user = django_user_model.objects.create_user(username=username, password=f"pw-{username}-1234")
        membership_set(collection=data.collection, user=user, role=role)

    # 1. A rater follows the link a refused training gives and rates a training question's answer.
    rater_page = browser.new_context().new_page()
    log_in(rater_page, live_server, username="rita", password="pw-rita-1234", next_path="/")
    rater_page.goto(f"{live_server.url}/c/learnable/rate/?split=train")
    expect(rater_page.locator("#rating-form")).to_have_attribute("data-ready", "true")
    first_card = rater_page.locator(".answer-card").first
    first_card.locator('input[type="radio"][value="3"]').check()
    expect(first_card.locator(".save-state")).to_contain_text("Saved")
    rating = Rating.objects.get(rater__username="rita")
    assert rating.question.split == "train"

    # 2. The trainer trains and watches the progress until the page reloads with the decision.
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    log_in(page, live_server, username="tom", password="pw-tom-1234", next_path="/c/learnable/rankers/")
    page.get_by_role("button", name="Train new version").click()
    expect(page.get_by_role("button", name="Train new version")).to_be_disabled()
    expect(page.get_by_test_id("training-outcome")).to_contain_text("Promoted v2", timeout=180_000)
    expect(page.get_by_role("button", name="Train new version")).to_be_enabled()

    # 3. The new version's page says what it learned and how it did against v1 on the test questions.
    page.get_by_role("link", name="Show v2").click()
    expect(page.get_by_test_id("comparison")).to_contain_text("better")

    # 4. The promoted version is evaluated: its run appears on the dashboard.
    deadline = time.monotonic() + 120
    run = None
    while time.monotonic() < deadline and run is None:
        run = EvaluationRun.objects.filter(
            ranker=ranker, ranker_version__label="v2", status=RunStatus.SUCCEEDED
        ).first()
        time.sleep(0.05)
    assert run is not None, celery_worker_process.log()
    page.goto(f"{live_server.url}/evaluation/c/learnable/")
    expect(page.get_by_test_id("headline")).to_have_text(f"{run.ndcg_mean:.3f}")

    # 5. The Rankers page explains the training first: what it tried, each candidate, what it kept.
    page.goto(f"{live_server.url}/c/learnable/rankers/")
    explained = page.get_by_test_id("training-explained")
    v2 = ranker.versions.get(label="v2")
    expect(explained.get_by_test_id("explained-summary")).to_contain_text(
        f"It tried 4 ways of ranking, 2 of which learn from the {v2.label_count} "
        "ratings of 30 training questions, and scored each by cross-validation"
    )
    expect(explained.get_by_test_id("explained-summary")).to_contain_text("It kept the learned fusion")
    candidates = explained.get_by_test_id("explained-candidates")
    # Every training question's labels came from an import (a ground truth): an unlisted answer counts as
    # 0 stars in the fit and the cross-validation, so the heading is plain cross-validated NDCG@10.
    expect(candidates.locator("thead")).to_contain_text("Cross-validated NDCG@10")
    expect(candidates.locator("thead")).not_to_contain_text("on rated answers")
    expect(candidates.locator("tbody tr")).to_have_count(4)
    expect(candidates.locator("tr.chosen")).to_contain_text("kept")
    assert (
        explained.bounding_box()["y"]
        < page.get_by_role("button", name="Train new version").bounding_box()["y"]
    )

    # 6. Rolling back to v1, never compared with v2, asks first; confirming promotes it.
    v1 = ranker.versions.get(label="v1")
    page.goto(f"{live_server.url}/c/learnable/rankers/{ranker.pk}/versions/{v1.pk}/")
    page.get_by_test_id("promote-button").click()
    expect(page.get_by_test_id("promote-confirm-figures")).to_have_text(
        "v1 has not been compared with the champion, v2: it is not measured better. Promote anyway?"
    )
    ranker.refresh_from_db()
    assert ranker.champion.label == "v2"
    page.get_by_test_id("promote-confirm").click()
    expect(page.get_by_role("heading", level=1)).to_contain_text("champion")
    ranker.refresh_from_db()
    assert ranker.champion.label == "v1"
