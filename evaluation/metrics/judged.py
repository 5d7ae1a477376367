"""Judged-only NDCG@k: an unrated answer is unknown, so it is removed before NDCG is computed.

This is ``trec_eval -J -m ndcg_cut.k`` (``-J``: "judged docs only", trec_eval 10's ``form_res_rels.c``):
the ranking is *condensed* to its judged documents, which move up into the places the unjudged ones
leave, and ``ndcg_cut.k`` is computed on that list.  For question ``q`` with candidates ``a``, scores
``s_{q,a}`` and labels ``l_{q,a}`` (stars; NaN, or any negative value, for "unknown")::

    J_q      = {a : l_{q,a} >= 0}, ordered by s_{q,a} descending (ties: input order) -> a_1 .. a_|J_q|
    DCG_J@k  = sum_{r=1..min(k, |J_q|)} g(l_{q,a_r}) / d(r)
    IDCG@k   = sum_{r=1..k} g(l*_r) / d(r),   l* = the question's known labels, descending
    NDCG_J@k = DCG_J@k / IDCG@k               (NaN when IDCG@k = 0: no known relevant answer)

with the gain ``g`` and discount ``d`` of :mod:`.ranking` (defaults: ``g(l) = l`` when ``l > 0``,
``d(r) = log2(r + 1)``, trec_eval's).  ``l*`` is by default the known labels among the candidates;
pass ``ideal`` (every known label of the question, retrieved or not) to get trec_eval's ideal exactly.

A question with no known relevant answer has no NDCG (NaN, left out of means by
:func:`.ranking.mean_ignoring_undefined`); trec_eval prints 0 for it (``np.nan_to_num`` gives its
figures).  A question whose candidates are all unrated, but which has a known relevant answer in
``ideal``, scores 0 (trec_eval too: its condensed list is empty).

The difference from plain NDCG@k: there an unrated answer in the top k is read as 0 stars and pushes
the rated ones down; here it does not count at all, so the figure rests on what is known.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from rankers.ndcg import Discount, FloatArray, Gain, as_label_matrix, check_k, ndcg_at_k

__all__ = ["condensed", "judged_ndcg_at_k"]


def condensed(retrieved: ArrayLike, depth: int | None = None) -> FloatArray:
    """The condensed (judged-only) rankings: each row's labels ``>= 0`` in rank order, then NaN.

    ``retrieved[q, r-1]`` is the label at rank ``r``; NaN or a negative value means "not judged" (and
    is dropped, as trec_eval ``-J`` drops documents missing from the qrels or with a negative grade).
    ``out[q, j-1]`` is the label of the ``j``-th judged answer of question ``q``; only the first
    ``depth`` columns are returned when ``depth`` is given.
    """
    matrix = np.asarray(retrieved, dtype=np.float64)
    if matrix.ndim == 1:
        matrix = matrix[np.newaxis, :]
    known = matrix >= 0  # NaN >= 0 is False
    order = np.argsort(~known, axis=1, kind="stable")  # judged first, rank order kept
    if depth is not None:
        order = order[:, :depth]
    out = np.take_along_axis(matrix, order, axis=1)
    out[~np.take_along_axis(known, order, axis=1)] = np.nan
    return out


def judged_ndcg_at_k(
    scores: ArrayLike,
    labels: ArrayLike,
    k: int,
    *,
    ideal: ArrayLike | None = None,
    gain: Gain = "linear",
    discount: Discount = "log2",
) -> FloatArray:
    """Judged-only NDCG@k of each question (formula in the module docstring), from in-memory arrays.

    ``scores``, ``labels``: shape ``(Q, D)`` (1-D: one question), ``[q, a]`` for candidate ``a`` of
    question ``q`` in any order; ``labels`` are stars, NaN when unrated (unknown; also for padding
    past a question's last candidate, where ``scores`` may hold anything).  Unknowns are dropped,
    the rest ranked by score descending (ties keep input order: sort the candidates first to break
    ties otherwise), NDCG@k taken on what is left.  ``ideal``: ``(Q, L)`` every known label of each
    question, retrieved or not, NaN padded; default: the known ``labels``.  Returns ``(Q,)`` float64,
    NaN where no known label is positive (trec_eval prints 0 there).

    Example: scores ``[4, 3, 2, 1]``, labels ``[NaN, 0, NaN, 3]``: the condensed ranking is ``0, 3``,
    ``DCG@10 = 3 / log2(3)``, ``IDCG@10 = 3``, so ``0.631`` (plain NDCG, unrated read as 0: 0.431).
    """
    k = check_k(k)
    label_m = as_label_matrix(labels, "labels")
    score_m = np.asarray(scores, dtype=np.float64)
    if score_m.ndim == 1:
        score_m = score_m[np.newaxis, :]
    if score_m.shape != label_m.shape:
        raise ValueError(f"scores have shape {score_m.shape} but labels {label_m.shape}; they must match")
    known = label_m >= 0
    if not np.isfinite(score_m[known]).all():
        raise ValueError("scores of rated candidates must be finite")
    ideal_m = np.where(known, label_m, np.nan) if ideal is None else as_label_matrix(ideal, "ideal")
    key = np.where(known, -score_m, np.inf)  # unknowns after every rated candidate
    order = np.argsort(key, axis=1, kind="stable")[:, :k]
    ranked = np.where(
        np.take_along_axis(known, order, axis=1), np.take_along_axis(label_m, order, axis=1), np.nan
    )
    return ndcg_at_k(ranked, ideal_m, k, gain=gain, discount=discount)
