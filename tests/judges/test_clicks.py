"""Clicks beside ratings: the click stars of the hand-built log (``tests/evaluation/click_log.py``) against
people's and a judge's stars, figures worked by hand.

COEC stars in the range 2026-11-28 (see ``tests/evaluation/test_selectors_clicks.py``) against people's:
q1·a1 2 vs 3, q1·a2 1 vs 1, q1·a3 0 vs 2, q2·a1 0 vs 0, q2·a3 0 vs 3 (q2·a2 has no COEC stars).
Weighted κ (quadratic): observed disagreement 0.2·(4 + 9 + 1)/9, chance Σ p_i c_j (i − j)²/9 with people's
marginals (.2, .2, .2, .4) and the clicks' (.6, .2, .2, 0): (0.2 + 0.16 + 0.52 + 2.56)/9 = 3.44/9, so
κ = 1 − 2.8/3.44 = 8/43. Kendall τ-b of people's stars and the COEC values (5/3, 5/6, 0, 0, 0): score 2,
1 pair tied in stars and 3 in COEC of 10, τ = 2 / √(9 · 7).
"""

from __future__ import annotations

import datetime as dt
import math

import pytest
from django.contrib.auth import get_user_model

from corpus.models import Role
from corpus.services import membership_set
from evaluation.selectors.clicks import ClickParameters
from judges.clicks import PEOPLE, clicks_beside_ratings
from judges.services import judge_create
from ratings.services import judge_ratings_record
from tests.evaluation.click_log import clicky_collection, rate_clicky

DAY = dt.date(2026, 11, 28)


@pytest.fixture
def clicky(db):
    collection = clicky_collection()
    rater = get_user_model().objects.create_user(username="clicky-rater", password=None)
    membership_set(collection=collection, user=rater, role=Role.RATER)
    rate_clicky(collection, rater)
    return collection


def _comparison(result, method, grader):
    return next(c for c in result.comparisons if (c.method, c.grader) == (method, grader))


def test_clicks_beside_people_coec_figures_by_hand(clicky):
    result = clicks_beside_ratings(
        collection=clicky, parameters=ClickParameters(start_date=DAY, end_date=DAY)
    )

    coec = _comparison(result, "coec", PEOPLE)
    assert coec.pairs == 5
    assert coec.confusion == [[1, 0, 0, 0], [0, 1, 0, 0], [1, 0, 0, 0], [1, 0, 1, 0]]
    assert coec.kappa == pytest.approx(8 / 43)
    assert coec.exact == pytest.approx(0.4)
    assert coec.tau == pytest.approx(2 / math.sqrt(63))
    assert coec.far == 2
    assert _comparison(result, "pbm", PEOPLE).pairs == 5


def test_clicks_beside_people_lists_the_cascade_models_far_pairs(clicky):
    result = clicks_beside_ratings(
        collection=clicky, parameters=ClickParameters(start_date=DAY, end_date=DAY)
    )

    # DBN stars q1·a1 3, q1·a2 3, q2·a1 0, q2·a3 0 (q1·a3 never read) against people's 3, 1, 0, 3.
    cascade = _comparison(result, "dbn", PEOPLE)
    assert (cascade.pairs, cascade.exact, cascade.far, cascade.measure) == (
        4,
        0.5,
        2,
        "cascade_attractiveness",
    )
    assert cascade.kappa == pytest.approx(3 / 16)
    far = [(f.judgment.question_external_id, f.judgment.answer_external_id, f.people) for f in result.far]
    assert (result.method, far) == ("dbn", [("q2", "a3", 3), ("q1", "a2", 1)])


def test_clicks_beside_a_judge_that_agrees(clicky):
    judge = judge_create(collection=clicky, name="Model", kind="builtin")
    ids = {(q.external_id): q.pk for q in clicky.questions.all()}
    answers = {a.external_id: a.pk for a in clicky.answers.all()}
    judge_ratings_record(
        account=judge.account,
        judgments=[
            (ids[q], answers[a], s, "", None)
            for (q, a), s in {("q1", "a1"): 2, ("q1", "a2"): 1, ("q2", "a3"): 0}.items()
        ],
    )

    result = clicks_beside_ratings(
        collection=clicky, parameters=ClickParameters(start_date=DAY, end_date=DAY)
    )

    model = _comparison(result, "coec", "Model")
    assert (model.pairs, model.kappa, model.exact, model.tau, model.far) == (3, 1.0, 1.0, 1.0, 0)
    assert [(c.method, c.grader) for c in result.comparisons] == [
        ("dbn", PEOPLE),
        ("coec", PEOPLE),
        ("pbm", PEOPLE),
        ("dbn", "Model"),
        ("coec", "Model"),
        ("pbm", "Model"),
    ]


def test_clicks_beside_ratings_with_no_log_has_no_pairs(clicky):
    result = clicks_beside_ratings(collection=clicky, parameters=ClickParameters(application="nobody"))

    people = _comparison(result, "coec", PEOPLE)
    assert (people.pairs, people.kappa, people.exact, people.tau, people.far) == (0, None, None, None, 0)
    assert people.confusion == [[0] * 4] * 4
