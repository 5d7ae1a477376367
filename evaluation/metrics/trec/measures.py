"""The formulas of trec_eval 10's ``ndcg_cut``, ``success``, ``P`` and ``recall`` (``m_ndcg_cut.c``,
``m_success.c``, ``m_P.c``, ``m_recall.c``), and ``ndcg_cut_judged`` (``trec_eval -J -m ndcg_cut``),
vectorised over queries.

Every formula reads the per-query matrices built by :func:`.relevance.evaluate_chunk`:

* ``labels[q, r-1] = rel_r``, the relevance of the document at rank ``r``: its grade, ``-1`` if it is
  not in the qrels, ``-2`` if its grade is negative, NaN past the end of the ranking;
* ``ideal[q]``: the query's positive grades, descending (every judged document, retrieved or not);
* ``num_rel[q]``: the number of grades >= ``max(level, 0)``.

``level`` is the relevance level (trec_eval's ``-l``): ``rel_r >= level`` counts as relevant.  Each
function returns ``{"<measure>_<k>": values}`` for the cutoffs ``k`` asked for.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from rankers.ndcg import dcg_prefix

from ..judged import condensed
from .docs import FloatArray, IntArray
from .spec import Measure

__all__ = ["ndcg_cut", "ndcg_cut_judged", "precision", "recall", "success", "values_for"]


def ndcg_cut(labels: FloatArray, ideal: FloatArray, cutoffs: Sequence[int]) -> dict[str, FloatArray]:
    """``ndcg_cut.k = DCG@k / IDCG@k``, 0 when ``IDCG@k = 0`` (no positive grade).

    ``DCG@k = sum_{r<=k, rel_r>0} rel_r / log2(r + 1)``; ``IDCG@k`` is the same sum over ``ideal``.
    ``-l`` plays no part.
    """
    out: dict[str, FloatArray] = {}
    n, depth = labels.shape
    dcg = dcg_prefix(np.where(labels > 0, labels, 0.0))
    idcg = dcg_prefix(ideal)
    for cutoff in cutoffs:
        top = dcg[:, min(cutoff, depth) - 1] if depth else np.zeros(n)
        best = idcg[:, min(cutoff, idcg.shape[1]) - 1] if idcg.shape[1] else np.zeros(n)
        # trec_eval divides only when the ideal DCG is positive (else the DCG is 0 anyway)
        out[f"ndcg_cut_{cutoff}"] = np.divide(top, best, out=top.copy(), where=best > 0)
    return out


def ndcg_cut_judged(labels: FloatArray, ideal: FloatArray, cutoffs: Sequence[int]) -> dict[str, FloatArray]:
    """``ndcg_cut_judged.k`` = ``trec_eval -J -m ndcg_cut.k``: ``ndcg_cut.k`` of the condensed ranking.

    The documents not judged (``rel_r < 0``: not in the qrels, or a negative grade) are removed and
    the judged ones keep their order, ranked ``1, 2, ...`` (:func:`..judged.condensed`); with
    ``c_j`` the relevance of the ``j``-th judged document,
    ``DCG_J@k = sum_{j<=k, c_j>0} c_j / log2(j + 1)`` and the value is ``DCG_J@k / IDCG@k``, 0 when
    ``IDCG@k = 0``; ``IDCG@k`` is :func:`ndcg_cut`'s (every positive grade of the query).  ``labels``
    must hold the whole ranking (the judged documents can be anywhere in it).
    """
    values = ndcg_cut(condensed(labels, max(cutoffs)), ideal, cutoffs)
    return {f"ndcg_cut_judged_{k}": values[f"ndcg_cut_{k}"] for k in cutoffs}


def _relevant_in_top(labels: FloatArray, level: int, cutoffs: Sequence[int]) -> dict[int, FloatArray]:
    """``{k: hits@k}``, ``hits@k = #{r <= k : rel_r >= level}`` (NaN, past the end, never counts)."""
    n, depth = labels.shape
    found = np.cumsum(labels >= level, axis=1)
    return {k: found[:, min(k, depth) - 1].astype(np.float64) if depth else np.zeros(n) for k in cutoffs}


def success(labels: FloatArray, level: int, cutoffs: Sequence[int]) -> dict[str, FloatArray]:
    """``success.k = 1 if hits@k > 0 else 0``: some document at rank <= k has ``rel_r >= level``."""
    hits = _relevant_in_top(labels, level, cutoffs)
    return {f"success_{k}": (hits[k] > 0).astype(np.float64) for k in cutoffs}


def precision(labels: FloatArray, level: int, cutoffs: Sequence[int]) -> dict[str, FloatArray]:
    """``P.k = hits@k / k`` (a ranking shorter than k still divides by k)."""
    hits = _relevant_in_top(labels, level, cutoffs)
    return {f"P_{k}": hits[k] / k for k in cutoffs}


def recall(
    labels: FloatArray, num_rel: IntArray, level: int, cutoffs: Sequence[int]
) -> dict[str, FloatArray]:
    """``recall.k = hits@k / num_rel``, 0 when the query has no grade >= ``max(level, 0)``."""
    n = labels.shape[0]
    hits = _relevant_in_top(labels, level, cutoffs)
    return {f"recall_{k}": np.divide(hits[k], num_rel, out=np.zeros(n), where=num_rel > 0) for k in cutoffs}


def values_for(
    measure: Measure, labels: FloatArray, ideal: FloatArray, num_rel: IntArray, level: int
) -> dict[str, FloatArray]:
    """Per-query values of one measure at each of its cutoffs, named ``"<measure>_<cutoff>"``."""
    if measure.name == "ndcg_cut":
        return ndcg_cut(labels, ideal, measure.cutoffs)
    if measure.name == "ndcg_cut_judged":
        return ndcg_cut_judged(labels, ideal, measure.cutoffs)
    if measure.name == "success":
        return success(labels, level, measure.cutoffs)
    if measure.name == "P":
        return precision(labels, level, measure.cutoffs)
    if measure.name == "recall":
        return recall(labels, num_rel, level, measure.cutoffs)
    raise ValueError(f"measure {measure.name!r} has no formula")
