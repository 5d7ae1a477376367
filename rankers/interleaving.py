"""Team-draft interleaving of two rankings, the same list for the same ``query_id`` on every replay.

Team draft (Radlinski, Kurup & Joachims, CIKM 2008, "How does clickthrough data reflect retrieval
quality?"): the two rankings are two captains picking players. Each round the team that has picked
fewer hits so far picks next; when both have picked as many, a coin decides who picks first. A team
picks its highest-ranked hit that is not in the list yet, and that hit is credited to it::

    while A and B both have a hit not yet in L, and |L| < length:
        if |T_A| < |T_B| or (|T_A| = |T_B| and coin_k = 1):  A picks  (k = the round's number)
        else:                                               B picks

Each team so gets ⌈n/2⌉ or ⌊n/2⌋ of the first n hits, and which one picks first in a round is a fair coin,
so a team's hits are not shown higher than its rival's on average (tests/evaluation/online).

When one ranking has no hit left that is not already listed (rankings of different lengths or of
different hits), the draft stops, as in the paper; the other ranking's remaining hits then fill the list
up to ``length`` with team ``NO_TEAM``, so the page keeps its length and neither team is credited for hits
the other could not have picked. Two rerankings of the same top K run out together and never need it.

The coins are bits of ``SHA-256(salt ‖ "\\x1f" ‖ query_id ‖ "\\x1f" ‖ block)`` (block 0, 1, ... as more
than 256 rounds are needed): a stable hash, so the same query_id (and salt, e.g. the test's id) gives the
same list in any process, Python or numpy version, and a replay of the log can recompute it. Python's
``hash()`` is salted per process and numpy's streams may change between releases, so neither is used.

One query at a time and in plain Python: it runs on the serving path for one request, where a list of at
most a few dozen hits is faster to walk than to vectorise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

__all__ = ["CHALLENGER", "CHAMPION", "NO_TEAM", "Interleaving", "coin_flips", "team_draft_interleave"]

CHAMPION = -1
CHALLENGER = 1
NO_TEAM = 0  # a hit listed after the draft stopped: nobody's


@dataclass(frozen=True)
class Interleaving:
    """The served list and, for each of its hits, the team credited with it (``CHAMPION``,
    ``CHALLENGER`` or ``NO_TEAM``)."""

    hits: tuple[Hashable, ...]
    teams: tuple[int, ...]


def coin_flips(query_id: str, n: int, *, salt: str = "") -> list[int]:
    """The first ``n`` coins (0 or 1) of ``query_id``: bit i of the SHA-256 stream, most significant
    bit of each byte first."""
    bits: list[int] = []
    block = 0
    while len(bits) < n:
        digest = hashlib.sha256(f"{salt}\x1f{query_id}\x1f{block}".encode()).digest()
        bits.extend((byte >> shift) & 1 for byte in digest for shift in range(7, -1, -1))
        block += 1
    return bits[:n]


def team_draft_interleave(
    champion: Sequence[Hashable],
    challenger: Sequence[Hashable],
    *,
    query_id: str,
    length: int | None = None,
    salt: str = "",
) -> Interleaving:
    """Team-draft interleaving of the champion's and the challenger's rankings (hit ids, best first) for
    ``query_id``; ``length`` caps the list (default: as long as the longer ranking). A coin of 1 lets the
    champion pick first in that round. Duplicate ids within one ranking count once."""
    if length is None:
        length = max(len(champion), len(challenger))
    if length < 0:
        raise ValueError(f"length must be at least 0, got {length}")
    rankings = (list(dict.fromkeys(champion)), list(dict.fromkeys(challenger)))
    coins = coin_flips(query_id, len(rankings[0]) + len(rankings[1]) + 1, salt=salt)
    listed: set[Hashable] = set()
    hits: list[Hashable] = []
    teams: list[int] = []
    picked = [0, 0]  # hits picked by the champion, by the challenger
    cursor = [0, 0]  # next position to look at in each ranking

    def next_unlisted(side: int) -> Hashable | None:
        ranking = rankings[side]
        while cursor[side] < len(ranking) and ranking[cursor[side]] in listed:
            cursor[side] += 1
        return ranking[cursor[side]] if cursor[side] < len(ranking) else None

    rounds = 0
    while len(hits) < length:
        first, second = next_unlisted(0), next_unlisted(1)
        if first is None or second is None:
            break
        if picked[0] < picked[1]:
            side = 0
        elif picked[1] < picked[0]:
            side = 1
        else:
            side = 0 if coins[rounds] == 1 else 1
            rounds += 1
        hit = first if side == 0 else second
        listed.add(hit)
        hits.append(hit)
        teams.append(CHAMPION if side == 0 else CHALLENGER)
        picked[side] += 1
    for side in (0, 1):
        while len(hits) < length and (hit := next_unlisted(side)) is not None:
            listed.add(hit)
            hits.append(hit)
            teams.append(NO_TEAM)
    return Interleaving(hits=tuple(hits), teams=tuple(teams))
