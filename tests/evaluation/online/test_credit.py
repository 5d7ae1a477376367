"""Click credit: each clicked hit credits its team once; the team with more clicks wins the query."""

from __future__ import annotations

import pytest

from evaluation.online import CHALLENGER, CHAMPION, NO_TEAM, Tally, credit_clicks, tally

C, H = CHAMPION, CHALLENGER


def test_credit_clicks_counts_each_hit_once_and_decides_each_query_by_hand():
    # query 0: challenger's hit 1 clicked twice, champion's hit 2 once      -> 1 : 1, tie
    # query 1: challenger's hits 1 and 3, champion's hit 2                 -> 2 : 1, challenger wins
    # query 2: champion's hit 1                                            -> 0 : 1, champion wins
    # query 3: no click; query 4: a click on a hit listed for nobody       -> neither takes part
    query = [0, 0, 0, 1, 1, 1, 2, 4]
    hit = [1, 1, 2, 1, 3, 2, 1, 5]
    team = [H, H, C, H, H, C, C, NO_TEAM]

    credit = credit_clicks(query, hit, team, n_queries=5)

    assert credit.challenger_clicks.tolist() == [1, 2, 0, 0, 0]
    assert credit.champion_clicks.tolist() == [1, 1, 1, 0, 0]
    assert credit.outcome.tolist() == [0, 1, -1, 0, 0]
    assert credit.clicked.tolist() == [True, True, True, False, False]
    assert tally(credit) == Tally(impressions=5, queries_with_clicks=3, wins=1, losses=1, ties=1)


def test_credit_clicks_with_no_click_gives_no_query_taking_part():
    credit = credit_clicks([], [], [], n_queries=3)

    assert tally(credit) == Tally(impressions=3, queries_with_clicks=0, wins=0, losses=0, ties=0)


@pytest.mark.parametrize(
    ("query", "team", "message"),
    [([0, 3], [H, C], "query indices"), ([0], [2], "team"), ([0, 1], [H], "same length")],
)
def test_credit_clicks_refuses_bad_input(query, team, message):
    with pytest.raises(ValueError, match=message):
        credit_clicks(query, [1] * len(query), team, n_queries=3)
