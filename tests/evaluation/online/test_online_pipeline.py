"""Interleave, click, credit, decide: the pieces of an online test together, on simulated users."""

from __future__ import annotations

import numpy as np

from evaluation.online import BETTER, KEEP_GOING, credit_clicks, online_verdict, tally, team_draft_interleave

DOCS = [f"d{i}" for i in range(10)]
RELEVANT = {"d0", "d1", "d2"}
EXAMINATION = 1.0 / np.arange(1, 11)  # users look at rank r with probability 1/r


def _run(champion: list[str], challenger: list[str], queries: int, seed: int):
    rng = np.random.default_rng(seed)
    query, hit, team = [], [], []
    for q in range(queries):
        served = team_draft_interleave(champion, challenger, query_id=f"user-query-{q}")
        attraction = np.array([0.7 if d in RELEVANT else 0.05 for d in served.hits])
        for position in np.flatnonzero(rng.random(len(served.hits)) < EXAMINATION * attraction):
            query.append(q)
            hit.append(int(position) + 1)
            team.append(served.teams[position])
    return tally(credit_clicks(query, hit, team, n_queries=queries))


def test_online_test_of_a_champion_against_itself_finds_no_winner():
    counts = _run(DOCS, DOCS, queries=600, seed=1)

    result = online_verdict(counts)

    assert (counts.impressions, counts.queries_with_clicks) == (600, 522)
    assert (counts.wins, counts.losses, counts.ties) == (194, 190, 138)
    assert result.p_value == 1.0
    assert result.verdict == KEEP_GOING
    assert result.low < 0 < result.high


def test_online_test_finds_the_challenger_that_ranks_the_relevant_answers_higher():
    champion = ["d3", "d0", "d1", "d2", *DOCS[4:]]  # an irrelevant answer above the three relevant ones
    counts = _run(champion, DOCS, queries=600, seed=2)

    result = online_verdict(counts)

    assert (counts.wins, counts.losses, counts.ties) == (325, 56, 67)
    assert result.delta == (325 - 56) / (2 * 448)
    assert result.verdict == BETTER
