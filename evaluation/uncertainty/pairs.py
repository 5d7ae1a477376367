"""The arrays every uncertainty estimator reads: question–answer pairs, their labels, and the runs' top k.

Pure numpy, no Django. Conventions (checked by :func:`judging_arrays`):

``pair_question``  ``(P,)`` int: the question (0..Q-1) of each pair.
``labels``         ``(P,)`` float: the pair's label in stars (0–3), ``NaN`` when unlabelled.
``run_pairs``      ``(R, Q, k)`` int: ``run_pairs[r, q, i]`` is the pair run ``r`` put at rank ``i + 1`` for
                   question ``q``; ``-1`` where the ranking is shorter than ``k``.

The pairs are every labelled pair of the questions (they form the ideal ranking, retrieved or not)
plus every pair in any run's top k. A pair appears once even when several runs retrieved it, so one
label (known or sampled) serves every run, as a rater's rating does.

NDCG@k of run ``r`` on question ``q`` for a full assignment of stars ``x`` (one value per pair):
``DCG = sum_{i<=k} g(x[run_pairs[r,q,i]]) / d(i)`` and ``IDCG = sum_{i<=k} g_(i) / d(i)`` where ``g_(i)``
is the ``i``-th largest gain among the question's pairs; ``NDCG = DCG / IDCG``, undefined (``NaN``) when
``IDCG = 0``. Gains and discounts are those of :mod:`rankers.ndcg`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankers.ndcg import Discount, Gain, check_k, discount_divisors, gains

__all__ = ["STARS", "JudgingArrays", "judging_arrays", "ndcg_for_labels"]

#: The stars a pair can get.
STARS = np.array([0.0, 1.0, 2.0, 3.0])


@dataclass(frozen=True)
class JudgingArrays:
    """Validated arrays (see the module docstring) plus derived lookups."""

    pair_question: NDArray[np.int64]
    labels: NDArray[np.float64]
    run_pairs: NDArray[np.int64]
    k: int
    gain: Gain
    discount: Discount
    #: ``(Q, M)`` the pairs of each question, ``-1`` padded.
    question_pairs: NDArray[np.int64]

    @property
    def n_questions(self) -> int:
        return int(self.run_pairs.shape[1])

    @property
    def n_runs(self) -> int:
        return int(self.run_pairs.shape[0])

    @property
    def unknown(self) -> NDArray[np.bool_]:
        return np.isnan(self.labels)

    def weights(self) -> NDArray[np.float64]:
        """``1 / d(i)`` for ranks 1..k."""
        return 1.0 / discount_divisors(self.k, self.discount)

    def rank_weights(self) -> NDArray[np.float64]:
        """``(R, P)``: ``1 / d(rank)`` of each pair in each run's top k, 0 when the run did not retrieve it."""
        out = np.zeros((self.n_runs, self.labels.size))
        w = self.weights()
        for r in range(self.n_runs):
            ranks = self.run_pairs[r]
            present = ranks >= 0
            out[r, ranks[present]] = np.broadcast_to(w, ranks.shape)[present]
        return out

    def best_rank(self) -> NDArray[np.int64]:
        """``(P,)``: the best (smallest) 1-based rank any run gave the pair; 0 when no run retrieved it."""
        best = np.full(self.labels.size, np.iinfo(np.int64).max)
        ranks = np.broadcast_to(np.arange(1, self.k + 1), self.run_pairs.shape)
        present = self.run_pairs >= 0
        np.minimum.at(best, self.run_pairs[present], ranks[present])
        return np.where(best == np.iinfo(np.int64).max, 0, best)

    def retrieved_by(self) -> NDArray[np.int64]:
        """``(P,)``: how many runs have the pair in their top k."""
        count = np.zeros(self.labels.size, dtype=np.int64)
        for r in range(self.n_runs):
            ids = self.run_pairs[r][self.run_pairs[r] >= 0]
            count[np.unique(ids)] += 1
        return count


def judging_arrays(
    *,
    pair_question: ArrayLike,
    labels: ArrayLike,
    run_pairs: ArrayLike,
    k: int,
    gain: Gain = "linear",
    discount: Discount = "log2",
) -> JudgingArrays:
    """Check and bundle the arrays; ``ValueError`` naming the problem on bad input."""
    k = check_k(k)
    pq = np.asarray(pair_question)
    if pq.ndim != 1 or (pq.size and not np.issubdtype(pq.dtype, np.integer)):
        raise ValueError("pair_question must be a 1-D integer array (one question index per pair)")
    pq = pq.astype(np.int64)
    lab = np.asarray(labels, dtype=np.float64)
    if lab.shape != pq.shape:
        raise ValueError(f"labels has shape {lab.shape} but pair_question has {pq.shape}; they must match")
    known = lab[~np.isnan(lab)]
    if ((known < 0) | (known > 3) | (known != np.round(known))).any():
        raise ValueError("labels must be whole stars 0–3 or NaN (unlabelled)")
    runs = np.asarray(run_pairs)
    if runs.ndim != 3 or runs.shape[2] != k or (runs.size and not np.issubdtype(runs.dtype, np.integer)):
        raise ValueError(f"run_pairs must be an integer array (runs, questions, k={k})")
    runs = runs.astype(np.int64)
    n_questions = runs.shape[1]
    if ((runs < -1) | (runs >= pq.size)).any():
        raise ValueError("run_pairs holds a pair index out of range (use -1 for 'no answer at this rank')")
    if pq.size and (pq.min() < 0 or pq.max() >= n_questions):
        raise ValueError(f"pair_question holds a question index outside 0..{n_questions - 1}")
    for r in range(runs.shape[0]):
        present = runs[r] >= 0
        q_of_rank = np.broadcast_to(np.arange(n_questions)[:, None], runs[r].shape)
        if (pq[runs[r][present]] != q_of_rank[present]).any():
            raise ValueError(f"run {r} ranks a pair of another question")
        for q in range(n_questions):
            row = runs[r, q][runs[r, q] >= 0]
            if np.unique(row).size != row.size:
                raise ValueError(f"run {r} lists a pair twice for question {q}")
    counts = np.bincount(pq, minlength=n_questions)
    width = int(counts.max()) if counts.size else 0
    question_pairs = np.full((n_questions, width), -1, dtype=np.int64)
    order = np.argsort(pq, kind="stable")
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]]) if counts.size else np.zeros(0, dtype=np.int64)
    slot = np.arange(pq.size) - np.repeat(starts, counts)
    question_pairs[pq[order], slot] = order
    gains(np.zeros(1), gain)  # validates the names
    discount_divisors(1, discount)
    return JudgingArrays(pq, lab, runs, k, gain, discount, question_pairs)


def ndcg_for_labels(arrays: JudgingArrays, stars: ArrayLike) -> NDArray[np.float64]:
    """NDCG@k of every run on every question for one or many full assignments of stars.

    ``stars`` has shape ``(P,)`` or ``(S, P)`` (no NaN); returns ``(R, Q)`` or ``(S, R, Q)``.
    """
    x = np.asarray(stars, dtype=np.float64)
    single = x.ndim == 1
    x = np.atleast_2d(x)
    if x.shape[1] != arrays.labels.size or np.isnan(x).any():
        raise ValueError("stars must give a value (no NaN) for every pair")
    g = gains(x, arrays.gain)  # (S, P)
    g_pad = np.concatenate([g, np.zeros((g.shape[0], 1))], axis=1)  # index -1 -> 0 gain
    w = arrays.weights()
    dcg = (g_pad[:, arrays.run_pairs] * w).sum(axis=3)  # (S, R, Q)
    ideal_gains = g_pad[:, arrays.question_pairs]  # (S, Q, M)
    width = min(arrays.k, ideal_gains.shape[2])
    top = -np.sort(-ideal_gains, axis=2)[:, :, :width]
    idcg = (top * w[:width]).sum(axis=2)  # (S, Q)
    with np.errstate(invalid="ignore", divide="ignore"):
        ndcg = np.where(idcg[:, None, :] > 0, dcg / idcg[:, None, :], np.nan)
    return ndcg[0] if single else ndcg
