"""Every run's NDCG@k on rated answers, per question, from the judging arrays: the measure every
comparison of two rankings uses (``evaluation.measures.NDCG_RATED``), so the "Is the challenger better?"
panel shows the same figure as the promotion gate and the compare page before its estimates.

For run ``r`` and question ``q`` with top-k pairs ``p_1 .. p_k`` (``run_pairs[r, q]``) and labels ``l``
(NaN: unrated), the ranking is condensed to its rated pairs, which move up into the places the unrated
ones leave (``trec_eval -J``, :func:`evaluation.metrics.judged.condensed`)::

    DCG_J@k = sum_{j=1..k} g(l of the j-th rated pair) / d(j)
    IDCG@k  = sum_{j=1..k} g(l*_j) / d(j),   l* = the question's known labels, descending
    NDCG_J  = DCG_J@k / IDCG@k                (NaN when IDCG@k = 0: no known relevant answer)

``rated_share[r]`` is the share of run ``r``'s top-k places, over all questions, that hold a rated answer
(``judged@k``, as evaluation runs store it).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from evaluation.metrics.judged import condensed
from rankers.ndcg import ndcg_at_k

from .pairs import JudgingArrays

__all__ = ["rated_ndcg", "rated_share"]


def _labels_of(arrays: JudgingArrays, pairs: NDArray[np.int64]) -> NDArray[np.float64]:
    """The labels of a padded array of pair indices (NaN for -1 and for unrated pairs)."""
    padded = np.append(arrays.labels, np.nan)  # index -1 reads the NaN
    return padded[pairs]


def rated_ndcg(arrays: JudgingArrays) -> NDArray[np.float64]:
    """``(R, Q)``: NDCG@k on rated answers of every run on every question (module docstring)."""
    ideal = _labels_of(arrays, arrays.question_pairs)
    out = np.empty((arrays.n_runs, arrays.n_questions))
    for r in range(arrays.n_runs):
        retrieved = condensed(_labels_of(arrays, arrays.run_pairs[r]))
        out[r] = ndcg_at_k(retrieved, ideal, arrays.k, gain=arrays.gain, discount=arrays.discount)
    return out


def rated_share(arrays: JudgingArrays) -> NDArray[np.float64]:
    """``(R,)``: the share of each run's top-k places holding a rated answer, over all questions."""
    rated = ~np.isnan(_labels_of(arrays, arrays.run_pairs))  # (R, Q, k)
    places = arrays.n_questions * arrays.k
    return rated.sum(axis=(1, 2)) / places if places else np.full(arrays.n_runs, np.nan)
