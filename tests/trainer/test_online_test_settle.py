"""online_test_settle (beat, every minute): the stop rule, and the online promotion policies."""

from __future__ import annotations

import pytest

from rankers.models import ChampionChange, PromotionPolicy
from tests.online_support import online_ranker, online_test_logged
from trainer.services import online_test_settle
from trainer.tasks import online_tests_settle

pytestmark = pytest.mark.django_db

WINS = [1] * 40  # 39 straight wins are the fewest the mixture SPRT finds significant (p ≤ 0.05)


@pytest.fixture
def versions(collection):
    return online_ranker(collection)


def test_online_test_settle_online_policy_promotes_a_significant_win(versions):
    ranker, champion, challenger = versions
    ranker.promotion_policy = PromotionPolicy.ONLINE
    ranker.save(update_fields=["promotion_policy"])
    test = online_test_logged(challenger, WINS)

    decision, reason = online_test_settle(test=test)

    test.refresh_from_db()
    ranker.refresh_from_db()
    change = ChampionChange.objects.get(ranker=ranker)
    assert decision == "promoted" and ranker.champion == challenger and test.state == "stopped"
    assert reason == (
        "The online test of v2 against v1: 40 interleaved queries, 40 with clicks, 40/0/0 wins/losses/ties, "
        "challenger better. Promoted by the policy: a version on a significant win of its online test."
    )
    assert (
        test.stop_reason
        == "Stopped by its stop rule: the stop rule: a verdict was reached (challenger better)."
    )
    assert (change.figures["wins"], change.figures["delta"], change.figures["online_test"]) == (
        40,
        0.5,
        test.pk,
    )


def test_online_test_settle_offline_policy_stops_without_promoting(versions):
    ranker, champion, challenger = versions
    test = online_test_logged(challenger, WINS)

    decision, _ = online_test_settle(test=test)

    ranker.refresh_from_db()
    assert (decision, ranker.champion) == ("stopped", champion)


def test_online_test_settle_online_and_offline_policy_needs_the_test_questions_to_agree(versions):
    ranker, champion, challenger = versions
    ranker.promotion_policy = PromotionPolicy.ONLINE_AND_OFFLINE
    ranker.save(update_fields=["promotion_policy"])
    test = online_test_logged(challenger, WINS)

    decision, reason = online_test_settle(test=test)

    ranker.refresh_from_db()
    assert (decision, ranker.champion) == ("stopped", champion)
    assert reason.endswith(
        "; offline on 0 test questions: within noise. Kept v1: the policy needs both to agree."
    )


def test_online_tests_settle_task_keeps_a_test_short_of_a_verdict_running_and_stops_a_spent_one(
    versions, other_collection
):
    _, _, challenger = versions
    going = online_test_logged(challenger, [1, 1, -1, 0, None])
    _, _, other = online_ranker(other_collection, name="Other")
    spent = online_test_logged(other, [1, -1, None], max_queries=3)

    assert online_tests_settle() == {going.pk: "running", spent.pk: "stopped"}
    spent.refresh_from_db()
    assert spent.stop_reason == "Stopped by its stop rule: the stop rule's 3 interleaved queries were served."
