"""Promoting by hand (``trainer.services.version_promote_by_hand``): a version not measured better than
the champion now needs ``confirm``, and ``promotion_check`` says why with the stored comparison's figures;
the API's ``confirm`` defaults to true, so its callers promote as before."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from rankers.models import ChampionChange, RankerVersion
from rankers.services import ranker_create, version_promote
from trainer.selectors import promotion_check
from trainer.services import PromotionUnconfirmed, version_promote_by_hand

pytestmark = pytest.mark.django_db


def _comparison(champion: RankerVersion, **figures) -> dict:
    return {
        "k": 10,
        "questions": 57,
        "challenger_ndcg": 0.43611,
        "champion_ndcg": 0.43611,
        "difference": 0.0,
        "ci_low": 0.0,
        "ci_high": 0.0,
        "p_value": 1.0,
        "verdict": "within noise",
        "champion": champion.label,
        "champion_id": champion.pk,
        **figures,
    }


@pytest.fixture
def ranker(collection):
    return ranker_create(collection=collection, name="Built-in", kind="builtin")  # champion v1


def _v(ranker, label, comparison=None) -> RankerVersion:
    return RankerVersion.objects.create(
        ranker=ranker, label=label, method="fusion", comparison=comparison or {}
    )


def test_promotion_check_of_a_version_better_than_the_champion_now(ranker):
    v2 = _v(
        ranker, "v2", _comparison(ranker.champion, challenger_ndcg=0.48, difference=0.044, verdict="better")
    )

    check = promotion_check(version=v2)

    assert (check.measured_better, check.needs_confirmation) == (True, False)
    assert (
        check.sentence
        == "v2 scored 0.480 vs the champion's 0.436 in NDCG@10 on rated answers (+0.044): better on 57 test questions."
    )


def test_promotion_check_sentences_of_versions_not_measured_better(ranker, trainer):
    v1 = ranker.champion
    noise = _v(ranker, "v2", _comparison(v1))
    never = _v(ranker, "v3")
    nothing = _v(ranker, "v4", _comparison(v1, questions=0))
    checks = {v.label: promotion_check(version=v) for v in (noise, never, nothing)}

    assert {label: (c.measured_better, c.needs_confirmation) for label, c in checks.items()} == {
        "v2": (False, True),
        "v3": (False, True),
        "v4": (False, True),
    }
    assert checks["v2"].sentence == (
        "v2 scored 0.436 vs the champion's 0.436 in NDCG@10 on rated answers (+0.000): it is not measured better (within noise on 57 test "
        "questions)."
    )
    assert (
        checks["v3"].sentence == "v3 has not been compared with the champion, v1: it is not measured better."
    )
    assert checks["v4"].sentence == (
        "v4 could not be compared with v1: no test question had a rated answer. It is not measured better."
    )


def test_promotion_check_of_a_version_better_than_an_earlier_champion_only(ranker, trainer):
    v1 = ranker.champion
    v2 = _v(ranker, "v2", _comparison(v1, challenger_ndcg=0.48, difference=0.044, verdict="better"))
    v3 = _v(ranker, "v3")
    version_promote(version=v3, changed_by=trainer, reason="by hand")

    check = promotion_check(version=v2)

    assert (check.measured_better, check.needs_confirmation) == (False, True)
    assert check.sentence == (
        "v2 was compared with v1, the champion then: 0.480 vs the champion's 0.436 in NDCG@10 on rated answers (+0.044), better on 57 test "
        "questions. It has not been compared with the champion now, v3: it is not measured better."
    )


def test_promotion_check_reads_an_older_comparison_by_the_champion_label(ranker):
    comparison = _comparison(ranker.champion, verdict="better", difference=0.04)
    del comparison["champion_id"]  # comparisons kept before champion_id was

    assert promotion_check(version=_v(ranker, "v2", comparison)).measured_better is True


def test_promote_by_hand_unconfirmed_refuses_and_changes_nothing(ranker, trainer):
    v2 = _v(ranker, "v2", _comparison(ranker.champion))

    with pytest.raises(PromotionUnconfirmed) as refused:
        version_promote_by_hand(version=v2, changed_by=trainer)

    assert refused.value.message_dict == {
        "confirm": [
            "v2 scored 0.436 vs the champion's 0.436 in NDCG@10 on rated answers (+0.000): it is not measured better (within noise on 57 "
            "test questions). Confirm to promote it anyway."
        ]
    }
    ranker.refresh_from_db()
    assert ranker.champion.label == "v1"
    assert ChampionChange.objects.filter(ranker=ranker).count() == 1


def test_promote_by_hand_confirmed_records_the_measured_difference(ranker, trainer):
    v2 = _v(ranker, "v2", _comparison(ranker.champion))

    change = version_promote_by_hand(version=v2, changed_by=trainer, confirm=True)

    assert (change.version_id, change.previous.label, change.reason) == (
        v2.pk,
        "v1",
        "Promoted by hand by tom. Confirmed although not measured better: v2 scored 0.436 vs the champion's "
        "0.436 in NDCG@10 on rated answers (+0.000): it is not measured better (within noise on 57 test questions).",
    )


def test_promote_by_hand_of_a_better_version_needs_no_confirmation(ranker, trainer):
    v2 = _v(ranker, "v2", _comparison(ranker.champion, verdict="better", difference=0.04))

    change = version_promote_by_hand(version=v2, changed_by=trainer, reason="Better on the help desk.")

    assert (change.version_id, change.reason) == (v2.pk, "Better on the help desk.")


def test_promote_by_hand_the_champion_again_is_refused_as_before(ranker, trainer):
    with pytest.raises(ValidationError) as refused:
        version_promote_by_hand(version=ranker.champion, changed_by=trainer)

    assert refused.value.message_dict == {"version": ["v1 is already the champion of Built-in."]}
