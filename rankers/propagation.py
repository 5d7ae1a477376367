"""Rating propagation: an answer rated good for similar training questions is likely good for this one.

For a question ``q`` and an answer ``a``::

    prop(q, a) = sum_{q' in N(q)} max(sim(q, q'), 0) ** p * gain(q', a)

* ``sim(q, q')``: cosine of the questions' embeddings (dot product of unit rows);
* ``N(q)``: the ``top_n`` labelled training questions most similar to ``q`` (ties: lower row first),
  never ``q`` itself: ``exclude`` names, for each query row, its own row among the training questions
  (or -1 when it is not one of them), so a training question's feature is computed as it would be for
  a new question (leave-one-out);
* ``gain(q', a)``: the stars ``q'`` gave ``a`` (0 when unrated);
* ``p`` (``power``) sharpens the weights towards the nearest questions; negative cosines count 0.

**Only training labels.** The caller passes the gains of TRAINING questions only. The labels of test
questions must never be passed: the feature would then carry the very judgements an evaluation scores.

Pure numpy (scipy.sparse gains accepted).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

__all__ = ["neighbour_weights", "propagation_scores"]


def _unit_rows(values: ArrayLike, name: str) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-d array (rows x dimensions)")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} must be finite")
    return array


def neighbour_weights(
    query_embeddings: ArrayLike,
    train_embeddings: ArrayLike,
    *,
    exclude: ArrayLike | None = None,
    top_n: int = 10,
    power: float = 2.0,
) -> sparse.csr_matrix:
    """(queries, training questions) sparse weights ``max(sim, 0) ** power`` of each query's ``top_n``
    most similar training questions, its own row (``exclude``) left out. Rows of the embeddings should
    have unit norm (cosine = dot product)."""
    queries = _unit_rows(query_embeddings, "query_embeddings")
    train = _unit_rows(train_embeddings, "train_embeddings")
    if queries.shape[1] != train.shape[1]:
        raise ValueError("query and training embeddings must have the same dimension")
    if isinstance(top_n, bool) or not isinstance(top_n, (int, np.integer)) or top_n < 1:
        raise ValueError("top_n must be a positive int")
    if not (power > 0 and np.isfinite(power)):
        raise ValueError("power must be > 0")
    q, t = len(queries), len(train)
    own = np.full(q, -1, dtype=np.int64) if exclude is None else np.asarray(exclude, dtype=np.int64)
    if own.shape != (q,) or np.any(own < -1) or np.any(own >= t):
        raise ValueError("exclude must give, per query, a training row or -1")
    if q == 0 or t == 0:
        return sparse.csr_matrix((q, t))
    sims = queries @ train.T
    rows = np.flatnonzero(own >= 0)
    sims[rows, own[rows]] = -np.inf
    n = min(top_n, t)
    # Stable order (highest similarity, then lowest row) so ties never depend on the sort algorithm.
    order = np.argsort(-sims, axis=1, kind="stable")[:, :n]
    chosen = np.take_along_axis(sims, order, axis=1)
    weights = np.where(np.isfinite(chosen), np.maximum(chosen, 0.0), 0.0) ** power
    matrix = sparse.csr_matrix(
        (weights.ravel(), order.ravel(), np.arange(0, q * n + 1, n)), shape=(q, t), dtype=np.float64
    )
    matrix.eliminate_zeros()
    return matrix


def propagation_scores(
    query_embeddings: ArrayLike,
    train_embeddings: ArrayLike,
    train_gains: ArrayLike | sparse.spmatrix,
    *,
    exclude: ArrayLike | None = None,
    top_n: int = 10,
    power: float = 2.0,
) -> NDArray[np.float64]:
    """``prop(q, a)`` (module docstring) for every query row and every answer column, dense (q, answers).

    ``train_gains``: (training questions, answers) stars, 0 where unrated; TRAINING questions only.
    Pick the candidates' columns from the result: ``propagation_scores(...)[i, candidate_positions]``.
    """
    gains = sparse.csr_matrix(train_gains, dtype=np.float64)
    train = _unit_rows(train_embeddings, "train_embeddings")
    if gains.shape[0] != len(train):
        raise ValueError("train_gains must have one row per training question")
    if gains.nnz and (gains.data.min() < 0 or not np.all(np.isfinite(gains.data))):
        raise ValueError("train_gains must be finite and >= 0")
    weights = neighbour_weights(query_embeddings, train, exclude=exclude, top_n=top_n, power=power)
    return np.asarray((weights @ gains).toarray(), dtype=np.float64)
