"""Who won each interleaved query: clicks credit the clicked hit's team, the team with more clicks wins.

For query q with clicked hits H_q (each hit counted once however often it was clicked) and the team
t(h) ∈ {champion −1, challenger +1, nobody 0} the interleaving gave hit h::

    c_q = #{h ∈ H_q : t(h) = +1}        (challenger's clicks)
    b_q = #{h ∈ H_q : t(h) = −1}        (champion's clicks)
    outcome_q = sign(c_q − b_q)          (+1 challenger wins, −1 champion wins, 0 tie)

A query takes part when c_q + b_q ≥ 1: a query nobody clicked (or clicked only on hits listed after the
draft stopped) tells nothing about either team and is neither a win, a loss nor a tie, as in Chapelle,
Joachims, Radlinski & Yue, "Large-scale validation and analysis of interleaved search evaluation" (TOIS
2012). So ``wins + losses + ties = queries_with_clicks ≤ impressions``.

Vectorised over every query of a test: one ``np.unique`` and two ``np.bincount``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankers.interleaving import CHALLENGER, CHAMPION, NO_TEAM

__all__ = ["Credit", "Tally", "credit_clicks", "tally"]


@dataclass(frozen=True)
class Credit:
    """Per query (index 0 … n_queries − 1): each team's clicked hits and the outcome (+1/−1/0);
    ``clicked`` marks the queries that take part."""

    challenger_clicks: NDArray[np.int64]
    champion_clicks: NDArray[np.int64]
    outcome: NDArray[np.int8]
    clicked: NDArray[np.bool_]


@dataclass(frozen=True)
class Tally:
    """What the version page shows of an online test: interleaved queries served, the ones that took
    part, and their wins/losses/ties from the challenger's side."""

    impressions: int
    queries_with_clicks: int
    wins: int
    losses: int
    ties: int


def credit_clicks(query: ArrayLike, hit: ArrayLike, team: ArrayLike, *, n_queries: int) -> Credit:
    """Credit click events: ``query[i]`` (index of the interleaved query), ``hit[i]`` (the clicked hit's
    position or any id unique within its query, so repeat clicks count once) and ``team[i]`` (the team
    the interleaving gave that hit)."""
    q = np.asarray(query, dtype=np.int64).ravel()
    h = np.asarray(hit, dtype=np.int64).ravel()
    t = np.asarray(team, dtype=np.int64).ravel()
    if not q.size == h.size == t.size:
        raise ValueError(f"query, hit and team must have the same length, got {q.size}, {h.size}, {t.size}")
    if n_queries < 0:
        raise ValueError(f"n_queries must be at least 0, got {n_queries}")
    if q.size and (q.min() < 0 or q.max() >= n_queries):
        raise ValueError(f"query indices must lie in 0 … {n_queries - 1}")
    if not np.isin(t, (CHAMPION, NO_TEAM, CHALLENGER)).all():
        raise ValueError("team must be -1 (champion), 0 (nobody) or +1 (challenger)")
    # One row per (query, hit): repeat clicks on a hit add nothing.
    rows = np.unique(np.stack([q, h, t], axis=1), axis=0) if q.size else np.empty((0, 3), np.int64)
    challenger = np.bincount(rows[:, 0], weights=rows[:, 2] == CHALLENGER, minlength=n_queries)
    champion = np.bincount(rows[:, 0], weights=rows[:, 2] == CHAMPION, minlength=n_queries)
    challenger, champion = challenger.astype(np.int64), champion.astype(np.int64)
    return Credit(
        challenger_clicks=challenger,
        champion_clicks=champion,
        outcome=np.sign(challenger - champion).astype(np.int8),
        clicked=(challenger + champion) > 0,
    )


def tally(credit: Credit) -> Tally:
    """The counts of a test from its per-query credit."""
    taking_part = credit.outcome[credit.clicked]
    return Tally(
        impressions=int(credit.outcome.size),
        queries_with_clicks=int(taking_part.size),
        wins=int((taking_part == 1).sum()),
        losses=int((taking_part == -1).sum()),
        ties=int((taking_part == 0).sum()),
    )
