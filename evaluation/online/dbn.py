"""The dynamic Bayesian network click model (DBN) with perseverance γ = 1, fitted by EM from its closed-form
simplified fit (SDBN): clicks corrected for a user who reads down the list and stops once satisfied.

Model (Chapelle & Zhang, "A dynamic Bayesian network click model for web search ranking", WWW 2009; Chuklin,
Markov & de Rijke, "Click Models for Web Search", 2015, §3.8 and §4.2). In a session (one served list,
ranks 1, 2, …), with E_r examination, A_r attraction, C_r click, S_r satisfaction::

    E_1 = 1     C_r = E_r · A_r     P(A_r = 1) = a_j     P(S_r = 1 | C_r = 1) = s_j     S_r = 0 if C_r = 0
    E_{r+1} = E_r · (1 − S_r)                                        (γ = 1: an unsatisfied user reads on)

a_j: attractiveness of pair j = (query, answer), the chance a user who reads the hit clicks it; s_j: its
satisfaction, the chance that a click on it ends the search. This is exactly the cascade user of
``bench/bench_online.py`` (P(click | grade), P(stop after click | grade)); a user who abandons without
being satisfied (γ < 1) is outside it, as she is outside that simulation.

Given the clicks of a session with last click at rank l (l = 0 when none), every hit at rank ≤ l was read;
one before l that was clicked did not satisfy; after l the user either was satisfied at l or read on and
clicked nothing::

    q = P(S_l = 0 | clicks) = (1 − s_l) Π_{r>l} (1 − a_r) / (s_l + (1 − s_l) Π_{r>l} (1 − a_r))

E-step (expected A and S of every row; q = 1 in a session without clicks, where every hit was read):

    P(A_r = 1 | clicks) = C_r              for r ≤ l (read: attracted iff clicked)
                        = (1 − q) · a_r    for r > l (unread when satisfied at l; read and not attracted otherwise)
    P(S_r = 1 | clicks) = 0 for a click before l,   1 − q for the click at l

M-step: ``a_j = Σ P(A = 1) / impressions of j``,  ``s_j = Σ_{clicks on j} P(S = 1) / clicks on j``.

EM starts from the **SDBN**, the closed form that takes the last click as satisfying and the hits after it
as unread (q = 0 at a last click; the convention of Chapelle & Zhang's simplified model and of PyClick)::

    a_j = clicks on j / sessions showing j at or above their last click (every hit of a session without clicks)
    s_j = last clicks on j / clicks on j

each with one pseudo-click and one pseudo-skip added for the start, (k + 1) / (n + 2), so that no start
sits on the boundary (a = 1 is a fixed point of EM: a hit at the bottom of the list, clicked each time it
is the last click and otherwise below one, would keep the SDBN's a = 1 however often it is skipped), and
iterates until no parameter moves by more than ``tolerance`` (or ``max_iterations``). A pair never
clicked has a = 0 in the SDBN and stays there (its rows contribute a_r = 0), and s NaN. A pair never
surely read (shown only below last clicks: ``reads`` = 0) has no attractiveness (NaN: no evidence, not
"unattractive"; EM keeps it at 0 inside). Both fits are returned: ``sdbn_attractiveness`` /
``sdbn_satisfaction`` beside the EM's.

Which figure ranks answers: the attractiveness a_j. The "relevance" a_j · s_j of the paper needs clicks
that end searches, and s is not identified when nothing below the last click attracts (a satisfied user
and one who read on and found nothing click alike: EM then keeps the SDBN's s); under a user who never
stops (the simulation's *perfect* user) the product ranks answers by that artefact, and elsewhere it
multiplies the noise of a by that of s (two ratios of few clicks). bench_online measures both
(bench/README.md, *A cascade click model for implicit labels*).

Vectorised: rows sorted by (session, rank); per session ``np.maximum.at`` finds the last click and
``np.bincount`` of log(1 − a) gives the products; each iteration is three ``np.bincount`` over the rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from evaluation.online.click_model import pair_count

__all__ = ["CascadeModel", "fit_dbn"]

_TINY = 1e-300


@dataclass(frozen=True)
class CascadeModel:
    """Per pair index: ``attractiveness`` a and ``satisfaction`` s of the DBN fitted by EM, the SDBN's
    closed-form ones it started from, the ``impressions`` (rows), ``reads`` (rows surely read: at or above
    their session's last click, or in a session without clicks) and ``clicks``; NaN where a pair has no
    read (a) or no click (s). ``sessions``: sessions in the log; ``iterations`` of EM run."""

    attractiveness: NDArray[np.float64]
    satisfaction: NDArray[np.float64]
    sdbn_attractiveness: NDArray[np.float64]
    sdbn_satisfaction: NDArray[np.float64]
    impressions: NDArray[np.int64]
    reads: NDArray[np.int64]
    clicks: NDArray[np.int64]
    sessions: int
    iterations: int
    converged: bool


def fit_dbn(
    session: ArrayLike,
    rank: ArrayLike,
    pair: ArrayLike,
    clicked: ArrayLike,
    *,
    n_pairs: int | None = None,
    tolerance: float = 1e-6,
    max_iterations: int = 500,
) -> CascadeModel:
    """Fit the DBN (γ = 1) to rows of (session key, rank, pair index 0 … n_pairs − 1, clicked), one row per
    hit shown in a session; gaps in a session's ranks are allowed, and two rows at one rank (a log that
    reused a query id) are both read or both unread."""
    s_key = np.asarray(session).ravel()
    r = np.asarray(rank, dtype=np.int64).ravel()
    j = np.asarray(pair, dtype=np.int64).ravel()
    c = np.asarray(clicked, dtype=bool).ravel()
    if not s_key.size == r.size == j.size == c.size:
        raise ValueError("session, rank, pair and clicked must have the same length")
    n_pairs = pair_count(j, n_pairs)
    _, s = np.unique(s_key, return_inverse=True)
    s = s.ravel()
    n_sessions = int(s.max()) + 1 if s.size else 0

    no_click = np.iinfo(np.int64).min
    last = np.full(n_sessions, no_click, dtype=np.int64)
    np.maximum.at(last, s[c], r[c])
    last_row = last[s]
    read = (last_row == no_click) | (r <= last_row)  # surely read: at or above the last click, or no click
    after = ~read  # below a last click: read only if it did not satisfy
    last_click = c & (r == last_row)

    shown = np.bincount(j, minlength=n_pairs).astype(np.float64)
    clicks = np.bincount(j, weights=c, minlength=n_pairs)
    lasts = np.bincount(j, weights=last_click, minlength=n_pairs)
    read_shown = np.bincount(j, weights=read, minlength=n_pairs)
    nan = np.full(n_pairs, np.nan)
    sdbn_a = np.divide(clicks, read_shown, out=nan.copy(), where=read_shown > 0)
    sdbn_s = np.divide(lasts, clicks, out=nan.copy(), where=clicks > 0)

    # EM starts inside (0, 1): from the SDBN with one pseudo-click and one pseudo-skip (its Laplace
    # smoothing). Started at the SDBN itself, a hit at the bottom of the list, whose non-clicks all fall
    # after a last click, would start at a = 1, where Π(1 − a) = 0 makes every last click above it
    # satisfying and a = 1 a fixed point EM never leaves. (Where a hit never moves, (1 − s) of the hit
    # above and its a are not separately identified; EM then stops where the start leads it.)
    a = (clicks + 1.0) / (read_shown + 2.0)
    sat = (lasts + 1.0) / (clicks + 2.0)
    clicked_rows = c.astype(np.float64)
    iterations, converged = 0, False
    while iterations < max_iterations and not converged:
        a_row = a[j]
        log_unattracted = np.bincount(
            s[after], weights=np.log(np.maximum(1.0 - a_row[after], _TINY)), minlength=n_sessions
        )
        rest = np.exp(log_unattracted)[s]  # Π_{r>l} (1 − a_r) of the row's session
        s_last = sat[j]  # used at the last click's row only
        read_on = (1.0 - s_last) * rest
        q = read_on / np.maximum(s_last + read_on, _TINY)  # at a last click's row: P(S_l = 0 | clicks)
        q_session = np.ones(n_sessions)
        q_session[s[last_click]] = q[last_click]
        attracted = np.where(after, (1.0 - q_session[s]) * a_row, clicked_rows)
        satisfied = np.where(last_click, 1.0 - q, 0.0)
        new_a = np.divide(
            np.bincount(j, weights=attracted, minlength=n_pairs), shown, out=a.copy(), where=shown > 0
        )
        new_s = np.divide(
            np.bincount(j, weights=satisfied, minlength=n_pairs), clicks, out=sat.copy(), where=clicks > 0
        )
        change = max(np.abs(new_a - a).max(initial=0.0), np.abs(new_s - sat).max(initial=0.0))
        a, sat = new_a, new_s
        iterations += 1
        converged = change <= tolerance
    return CascadeModel(
        attractiveness=np.where(read_shown > 0, a, np.nan),
        satisfaction=np.where(clicks > 0, sat, np.nan),
        sdbn_attractiveness=sdbn_a,
        sdbn_satisfaction=sdbn_s,
        impressions=shown.astype(np.int64),
        reads=read_shown.astype(np.int64),
        clicks=clicks.astype(np.int64),
        sessions=n_sessions,
        iterations=iterations,
        converged=converged,
    )
