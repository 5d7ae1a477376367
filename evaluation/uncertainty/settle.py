"""Which unlabelled pairs decide the answer, and about how many ratings would settle it.

Pure numpy. The measure ``M`` is either the headline (mean NDCG@k of one run over its questions) or the
difference ``Δ`` of two runs' means. Around the current expected gains ``ḡ`` (:mod:`.relevance`), each
unlabelled pair ``p`` of question ``q`` moves ``M`` by about ``c_p (g_p − ḡ_p)`` (first-order Taylor
expansion of ``NDCG = DCG / IDCG``), with

    ∂NDCG_r,q / ∂g_p = (w_r(p) − NDCG_r,q · ι(p)) / IDCG_q

where ``w_r(p) = 1/d(rank)`` when run ``r`` has ``p`` in its top k (else 0), ``ι(p)`` the same weight at
``p``'s place in the ideal order and ``IDCG_q``/``NDCG_r,q`` computed with expected gains. Then
``c_p = ∂NDCG_q / ∂g_p / n`` for the headline and ``(∂NDCG_challenger,q − ∂NDCG_champion,q) / ∂g_p / n``
for the difference, ``n`` the number of questions. Independent pairs give the label variance

    Var(M) ≈ sum_p c_p² Var(g_p),

and rating pair ``p`` removes its term: ``value_p = c_p² Var(g_p)`` is the expected reduction of that
variance, the score by which the "decide" queue orders pairs.
A pair both runs put at the same rank has
``c_p`` near 0 for the difference; a likely-relevant answer only the challenger found scores high.

**About N more ratings would settle this**: rating pairs in decreasing ``value_p`` removes their terms
one by one; ``N`` is the fewest ratings after which the remaining standard deviation
``sqrt(sum of the rest)`` is at most ``target`` (:func:`ratings_to_settle`).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from rankers.ndcg import gains

from .pairs import STARS, JudgingArrays

__all__ = ["pair_values", "ratings_to_settle"]


def _ideal_weights(arrays: JudgingArrays, g: NDArray[np.float64]) -> tuple[NDArray, NDArray]:
    """(IDCG per question, ι per pair) with gains ``g``."""
    w = arrays.weights()
    qp = arrays.question_pairs
    g_pad = np.append(g, -np.inf)
    row = g_pad[qp]  # (Q, M)
    order = np.argsort(-row, axis=1, kind="stable")
    width = min(arrays.k, qp.shape[1])
    ranked = np.take_along_axis(row, order, axis=1)[:, :width]
    idcg = (np.where(np.isfinite(ranked), ranked, 0.0) * w[:width]).sum(axis=1)
    iota = np.zeros(g.size + 1)
    pos_w = np.zeros(qp.shape)
    pos_w[:, :width] = w[:width]
    sorted_pairs = np.take_along_axis(qp, order, axis=1)
    iota[sorted_pairs[sorted_pairs >= 0]] = pos_w[sorted_pairs >= 0]
    return idcg, iota[:-1]


def pair_values(
    arrays: JudgingArrays,
    probs: NDArray[np.float64],
    *,
    challenger: int | None = 1,
    champion: int = 0,
) -> NDArray[np.float64]:
    """``(P,)`` ``value_p = c_p² Var(g_p)`` (0 for labelled pairs); ``challenger=None``: the headline of
    run ``champion``."""
    p = np.asarray(probs, dtype=np.float64)
    if p.shape != (arrays.labels.size, 4):
        raise ValueError("probs must have one row of 4 probabilities per pair")
    gain_values = gains(STARS, arrays.gain)
    mean_g = p @ gain_values
    var_g = p @ gain_values**2 - mean_g**2
    idcg, iota = _ideal_weights(arrays, mean_g)
    rank_w = arrays.rank_weights()  # (R, P)
    g_pad = np.append(mean_g, 0.0)
    dcg = (g_pad[arrays.run_pairs] * arrays.weights()).sum(axis=2)  # (R, Q)
    safe = np.where(idcg > 0, idcg, np.inf)
    ndcg = dcg / safe  # (R, Q); 0 where undefined
    q = arrays.pair_question
    derivative = (rank_w - ndcg[:, q] * iota) / safe[q]  # (R, P)
    n = max(int((idcg > 0).sum()), 1)
    c = (derivative[champion] if challenger is None else derivative[challenger] - derivative[champion]) / n
    return np.where(arrays.unknown, c**2 * np.maximum(var_g, 0.0), 0.0)


def ratings_to_settle(values: NDArray[np.float64], target: float) -> int:
    """Fewest ratings, best ``values`` first, leaving ``sqrt(sum of the rest) <= target``."""
    if not target >= 0 or math.isinf(target):
        raise ValueError(f"target must be a finite number >= 0, got {target!r}")
    v = np.sort(np.asarray(values, dtype=np.float64)[np.asarray(values) > 0])[::-1]
    remaining = v.sum() - np.concatenate([[0.0], np.cumsum(v)])
    ok = np.flatnonzero(np.sqrt(np.maximum(remaining, 0.0)) <= target + 1e-15)
    return int(ok[0]) if ok.size else int(v.size)
