"""Team-draft interleaving: the same list for the same query_id, fair shares, no duplicates."""

from __future__ import annotations

import hashlib

import pytest

from rankers.interleaving import CHALLENGER, CHAMPION, NO_TEAM, coin_flips, team_draft_interleave

C, H = CHAMPION, CHALLENGER


def test_coin_flips_are_the_bits_of_sha256_of_salt_and_query_id():
    first_byte = hashlib.sha256(b"\x1fq1\x1f0").digest()[0]  # salt "", query "q1", block 0
    expected = [(first_byte >> shift) & 1 for shift in range(7, -1, -1)]

    assert coin_flips("q1", 8) == expected == [0, 0, 0, 1, 1, 0, 1, 0]


def test_coin_flips_continue_into_the_next_block_past_256():
    second_block = hashlib.sha256(b"\x1fq1\x1f1").digest()[0] >> 7

    assert coin_flips("q1", 257)[256] == second_block


def test_team_draft_interleave_follows_the_coins_by_hand():
    # q6's coins start 1, 0: round 1 the champion picks first, round 2 the challenger.
    assert coin_flips("q6", 2) == [1, 0]

    result = team_draft_interleave(["a", "b", "c", "d"], ["b", "a", "d", "c"], query_id="q6")

    # Round 1: champion a, challenger b. Round 2: challenger's next unlisted is d, champion's is c.
    assert result.hits == ("a", "b", "d", "c")
    assert result.teams == (C, H, H, C)


def test_team_draft_interleave_gives_the_same_list_for_the_same_query_id():
    champion, challenger = list(range(10)), [9, 3, 1, 7, 0, 2, 8, 4, 6, 5]

    lists = {team_draft_interleave(champion, challenger, query_id="replay-me") for _ in range(3)}
    salted = team_draft_interleave(champion, challenger, query_id="replay-me", salt="test 7")

    assert len(lists) == 1
    assert salted == team_draft_interleave(champion, challenger, query_id="replay-me", salt="test 7")


def test_team_draft_interleave_lists_every_hit_once_and_keeps_the_teams_level():
    champion = [f"d{i}" for i in range(10)]
    challenger = champion[::-1]
    for n in range(200):
        result = team_draft_interleave(champion, challenger, query_id=f"query-{n}")
        assert sorted(result.hits) == sorted(champion)  # all ten, no duplicate
        for prefix in range(1, 11):
            lead = sum(result.teams[:prefix])
            assert abs(lead) <= 1  # after any prefix one team has at most one hit more


def test_team_draft_interleave_gives_each_team_the_top_slot_half_the_time():
    champion = [f"d{i}" for i in range(10)]
    challenger = champion[1:] + champion[:1]
    top = [team_draft_interleave(champion, challenger, query_id=str(n)).teams[0] for n in range(2000)]

    challenger_first = top.count(H)

    assert challenger_first == 1037  # a fair coin: 1,000 ± 45 at two standard deviations
    assert top.count(C) == 2000 - challenger_first


def test_team_draft_interleave_credits_identical_rankings_to_either_team():
    ranking = ["a", "b", "c", "d"]
    result = team_draft_interleave(ranking, ranking, query_id="q6")

    assert result.hits == ("a", "b", "c", "d")  # the same list users would get without the test
    assert result.teams == (C, H, H, C)


def test_team_draft_interleave_stops_the_draft_when_a_ranking_runs_out_and_fills_with_no_team():
    result = team_draft_interleave(["a", "b"], ["c", "a", "d", "e", "f"], query_id="q6", length=5)

    # Round 1: champion a, challenger c. Round 2 (challenger first): d; champion's next unlisted is b.
    # The champion has nothing left, so e then f fill the list for nobody.
    assert result.hits == ("a", "c", "d", "b", "e")
    assert result.teams == (C, H, H, C, NO_TEAM)


def test_team_draft_interleave_caps_the_length_and_drops_duplicate_ids():
    result = team_draft_interleave(["a", "a", "b", "c"], ["b", "c", "a"], query_id="q6", length=2)

    assert result.hits == ("a", "b")
    assert result.teams == (C, H)


def test_team_draft_interleave_refuses_a_negative_length():
    with pytest.raises(ValueError, match="length"):
        team_draft_interleave(["a"], ["b"], query_id="q", length=-1)
