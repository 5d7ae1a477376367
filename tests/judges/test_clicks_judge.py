"""The clicks judge: a judge whose stars come from the production log (the cascade model by default, COEC or
the position-based model), rated through its account like any judge, so its agreement with people, its
trust and the queue's disputes work as for a model judge. The log is ``tests/evaluation/click_log.py``'s;
with no date range its COEC stars are q1·a1 2, q1·a2 1, q1·a3 1 (0.5: the old click counts), q2·a1 0,
q2·a3 0, and q2·a2 none. Its DBN: sessions Q1 a1* a2 a3* (the old click is the last), Q2 a2* a1*,
Q3 a3 a1 a2* zz, so nothing of a question sits below a last click and a = clicks / reads: laptop·a1 2/2,
·a2 1/2, ·a3 1/1, usb·a1 0/1, ·a2 1/1, ·a3 0/1: stars 3, 2, 3, 0, 3, 0."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError

from corpus.models import Role
from corpus.services import membership_set
from judges.models import JudgingStatus
from judges.selectors import agreement
from judges.services import judge_create, judging_run, judging_start
from raters.next_task.judge_reads import judge_disputed_pairs
from ratings.models import Rating
from tests.evaluation.click_log import clicky_collection, rate_clicky


@pytest.fixture
def clicky(db):
    collection = clicky_collection()
    rater = get_user_model().objects.create_user(username="clicky-rater", password=None)
    membership_set(collection=collection, user=rater, role=Role.RATER)
    rate_clicky(collection, rater)
    return collection


def _stars(judge) -> dict[tuple[str, str], int]:
    return {
        (r.question.external_id, r.answer.external_id): r.stars
        for r in Rating.objects.filter(rater_id=judge.account.user_id).select_related("question", "answer")
    }


def test_clicks_judge_rates_the_clicked_pairs_by_the_cascade_model_by_default(clicky):
    judge = judge_create(collection=clicky, name="Clicks", kind="clicks")

    done = judging_run(judging_id=judging_start(judge=judge, selection="clicked").pk, worker="test")

    assert (done.status, done.judged, done.failed, judge.model) == (JudgingStatus.SUCCEEDED, 6, 0, "dbn")
    assert _stars(judge) == {
        ("q1", "a1"): 3,
        ("q1", "a2"): 2,
        ("q1", "a3"): 3,
        ("q2", "a1"): 0,
        ("q2", "a2"): 3,
        ("q2", "a3"): 0,
    }
    rating = Rating.objects.get(
        rater_id=judge.account.user_id, answer__external_id="a2", question__external_id="q1"
    )
    assert rating.reply == "Cascade-corrected click rate 0.500 in the 2 sessions that read it. Stars: 2"
    assert rating.certainty == pytest.approx(2 / 12)
    judge.refresh_from_db()
    assert (judge.calibration["method"], judge.calibration["thresholds"]) == ("dbn", [0.25, 0.5, 0.75])


def test_clicks_judge_rates_the_clicked_pairs_by_coec(clicky):
    judge = judge_create(collection=clicky, name="Clicks", kind="clicks", model="coec")

    done = judging_run(judging_id=judging_start(judge=judge, selection="clicked").pk, worker="test")

    assert (done.status, done.judged, done.failed, judge.model) == (JudgingStatus.SUCCEEDED, 5, 0, "coec")
    assert _stars(judge) == {
        ("q1", "a1"): 2,
        ("q1", "a2"): 1,
        ("q1", "a3"): 1,
        ("q2", "a1"): 0,
        ("q2", "a3"): 0,
    }
    rating = Rating.objects.get(
        rater_id=judge.account.user_id, answer__external_id="a1", question__external_id="q1"
    )
    assert rating.reply == "COEC 1.667: 2 clicks in 2 impressions, best rank 1. Stars: 2"
    assert rating.certainty == pytest.approx(2 / 12)
    judge.refresh_from_db()
    assert (judge.calibration["method"], judge.calibration["thresholds"], judge.calibration["events"]) == (
        "coec",
        [0.5, 1.0, 2.0],
        17,
    )


def test_clicks_judge_agreement_and_disputes_go_to_people(clicky):
    judge = judge_create(collection=clicky, name="Clicks", kind="clicks")
    judging_run(judging_id=judging_start(judge=judge, selection="clicked").pk, worker="test")

    figures = agreement(judge=judge)
    disputed = judge_disputed_pairs(collection=clicky)

    # People 3, 1, 2, 0, 3 against the cascade model's 3, 2, 3, 0, 0 (q1·a1, q1·a2, q1·a3, q2·a1, q2·a3).
    assert (figures.pairs, figures.exact) == (5, pytest.approx(0.4))
    assert figures.confusion == [[1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1], [1, 0, 0, 1]]
    q2, a3 = clicky.questions.get(external_id="q2"), clicky.answers.get(external_id="a3")
    assert disputed == {q2.pk: [a3.pk]}  # 3 stars apart; the others are at most 1


def test_clicks_judge_by_the_position_based_model_and_again(clicky):
    judge = judge_create(collection=clicky, name="PBM", kind="clicks", model="pbm")
    judging_run(judging_id=judging_start(judge=judge, selection="clicked").pk, worker="test")

    again = judging_run(judging_id=judging_start(judge=judge, selection="clicked").pk, worker="test")

    assert again.judged == 6  # every pair with a PBM estimate, rated again (q2·a2 too: its click counts)
    assert (
        Rating.objects.filter(rater_id=judge.account.user_id)
        .first()
        .reply.startswith("Position-corrected click rate ")
    )


def test_clicks_judge_refuses_other_selections_and_models(clicky):
    judge = judge_create(collection=clicky, name="Clicks", kind="clicks")

    with pytest.raises(ValidationError) as refused:
        judging_start(judge=judge, selection="queue")
    assert refused.value.message_dict == {
        "selection": ["A clicks judge rates the pairs with click evidence: choose “clicked”."]
    }
    with pytest.raises(ValidationError) as bad_model:
        judge_create(collection=clicky, name="Bad", kind="clicks", model="ctr")
    assert list(bad_model.value.message_dict) == ["model"]
