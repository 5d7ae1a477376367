"""A training that explains itself, in a real browser: after a training that kept the untrained fusion (the
demo's first training, as the learner stores it), the Rankers page says first what it tried, how each
candidate did and what would help, and the version says it is the same model as v1; promoting it, not
measured better, asks first with the measured difference, also without JavaScript."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from corpus.models import Collection, Role
from corpus.services import collection_create, membership_set
from rankers.fusion import UNTRAINED_FUSION_WEIGHTS
from rankers.models import ChampionChange, Ranker, RankerVersion
from rankers.services import ranker_create
from tests.browser.conftest import log_in
from trainer.models import Training, TrainingPhase, TrainingStatus

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DETAILS = {
    "first_stage": "bm25",
    "training_questions": 93,
    "learnable_questions": 87,
    "min_cv_gain": 0.005,
    "cv_judged_only": True,
    "cv_rated_share": 0.3355,
    "rated_per_question": {"k": 10, "mean": 8.0753, "under_k": 66, "to_k": 305},
    "params": {"signals": ["bm25", "cosine"], "weights": list(UNTRAINED_FUSION_WEIGHTS)},
    "candidates": [
        {"name": "bm25", "trained": False, "cv_ndcg": 0.522625, "chosen": False, "spread": 0.01},
        {"name": "fusion", "trained": False, "cv_ndcg": 0.564628, "chosen": True, "spread": 0.012},
        {"name": "learned-fusion", "trained": True, "cv_ndcg": 0.490059, "chosen": False, "spread": 0.02},
        {"name": "lambdamart", "trained": True, "cv_ndcg": 0.374786, "chosen": False, "spread": 0.03},
    ],
}


@dataclass
class Stage:
    collection: Collection
    ranker: Ranker
    v2: RankerVersion


@pytest.fixture
def stage(transactional_db, django_user_model) -> Stage:
    collection = collection_create(name="Tiny", slug="tiny")
    ranker = ranker_create(collection=collection, name="Built-in", kind="builtin")  # v1: the untrained fusion
    v2 = RankerVersion.objects.create(
        ranker=ranker,
        label="v2",
        method="fusion",
        uses_model=True,
        label_count=751,
        details=DETAILS,
        comparison={
            "k": 10,
            "questions": 57,
            "challenger_ndcg": 0.43611,
            "champion_ndcg": 0.43611,
            "difference": 0.0,
            "ci_low": 0.0,
            "ci_high": 0.0,
            "p_value": 1.0,
            "verdict": "within noise",
            "champion": "v1",
            "champion_id": ranker.champion_id,
        },
    )
    Training.objects.create(
        ranker=ranker,
        status=TrainingStatus.SUCCEEDED,
        phase=TrainingPhase.DONE,
        progress=1.0,
        version=v2,
        decision="kept",
        decision_reason="v2 vs v1 on 57 test questions: NDCG@10 0.436 vs 0.436 (+0.000, p = 1.000): within "
        "noise. Kept v1; a new version is promoted only if significantly better (p < 0.05).",
        finished_at=timezone.now(),
    )
    user = django_user_model.objects.create_user(username="tom", password="pw-tom-1234")
    membership_set(collection=collection, user=user, role=Role.TRAINER)
    return Stage(collection=collection, ranker=ranker, v2=v2)


@pytest.mark.parametrize("width", [390, 1280])
def test_rankers_page_explains_the_training_first_within_the_first_screen(browser, live_server, stage, width):
    context = browser.new_context(viewport={"width": width, "height": 844 if width == 390 else 800})
    page = context.new_page()
    try:
        log_in(page, live_server, username="tom", password="pw-tom-1234", next_path="/c/tiny/rankers/")
        explained = page.get_by_test_id("training-explained")
        summary = explained.get_by_test_id("explained-summary")
        expect(summary).to_contain_text(
            "No model that learns from ratings beat the untrained fusion, which needs none: the best of them, "
            "the learned fusion, scored 0.490 against 0.565"
        )
        expect(summary).to_contain_text("v2 is therefore the same model as v1.")
        # The explanation starts within the first screen, above the ranker's facts and its Train button.
        box = summary.bounding_box()
        assert box["y"] < page.viewport_size["height"]
        assert box["y"] < page.get_by_test_id("champion").bounding_box()["y"]
        assert box["y"] < page.get_by_role("button", name="Train new version").bounding_box()["y"]
        rows = explained.get_by_test_id("explained-candidates").locator("tbody tr")
        expect(rows).to_have_count(4)
        expect(rows.nth(1)).to_contain_text("kept")
        expect(explained.get_by_test_id("explained-next")).to_contain_text(
            "about 620 of those places hold an unrated answer."
        )
        # The technical details wait behind their disclosure.
        expect(explained.get_by_text("Technical details")).to_be_visible()
        expect(
            explained.get_by_text("Cross-validation scores each ranking on its rated answers only")
        ).to_be_hidden()
        expect(page.get_by_test_id("same-model")).to_have_text("same model as v1")
        overflow = page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow == 0
    finally:
        context.close()


@pytest.mark.parametrize("javascript", [True, False])
def test_promote_not_measured_better_asks_with_the_difference_then_promotes(
    browser, live_server, stage, javascript
):
    context = browser.new_context(java_script_enabled=javascript)
    page = context.new_page()
    try:
        log_in(page, live_server, username="tom", password="pw-tom-1234", next_path="/c/tiny/rankers/")
        page.goto(f"{live_server.url}/c/tiny/rankers/{stage.ranker.pk}/versions/{stage.v2.pk}/")
        expect(page.get_by_test_id("same-model")).to_have_text(
            "v2 is the same model as v1 (the untrained fusion): training kept it because no model that learns "
            "from ratings beat it in cross-validation."
        )
        page.get_by_test_id("promote-button").click()

        expect(page.get_by_test_id("promote-confirm-figures")).to_have_text(
            "v2 scored 0.436 vs the champion's 0.436 in NDCG@10 on rated answers (+0.000): it is not measured better (within noise on 57 "
            "test questions). Promote anyway?"
        )
        stage.ranker.refresh_from_db()
        assert stage.ranker.champion.label == "v1"
        page.get_by_test_id("promote-confirm").click()

        expect(page.get_by_role("heading", level=1)).to_contain_text("v2")
        expect(page.get_by_text("v2 is now the champion of Built-in.")).to_be_visible()
        stage.ranker.refresh_from_db()
        assert stage.ranker.champion.label == "v2"
        change = ChampionChange.objects.filter(ranker=stage.ranker).order_by("-id").first()
        assert change.reason.startswith("Promoted by hand by tom. Confirmed although not measured better:")
    finally:
        context.close()


def test_keeping_the_champion_from_the_confirmation_changes_nothing(page, live_server, stage):
    log_in(page, live_server, username="tom", password="pw-tom-1234", next_path="/c/tiny/rankers/")
    page.goto(f"{live_server.url}/c/tiny/rankers/{stage.ranker.pk}/versions/{stage.v2.pk}/")
    page.get_by_test_id("promote-button").click()

    page.get_by_role("link", name="Keep v1").click()

    expect(page.get_by_test_id("promote-button")).to_be_visible()
    stage.ranker.refresh_from_db()
    assert (stage.ranker.champion.label, ChampionChange.objects.filter(ranker=stage.ranker).count()) == (
        "v1",
        1,
    )
