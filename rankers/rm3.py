"""RM3 pseudo-relevance feedback: expand the question with terms of its top BM25 answers, rescore candidates.

Pure functions of arrays (numpy, scipy.sparse). What an index supplies: each answer's term ids in order
(``offsets``/``flat``: answer ``i``'s terms are ``flat[offsets[i]:offsets[i + 1]]``), each term's IDF,
and the average answer length; ``term_frequency_matrix`` turns the term lists into the sparse
term-frequency rows the functions below take.

RM3 (Abdul-Jaleel et al. 2004, "UMass at TREC 2004"; the form Anserini uses with BM25):

1. Feedback set ``F``: the ``m`` best answers of the first, BM25, retrieval, with scores ``s_d >= 0``.
   Their weight is ``P(d|Q) = s_d / sum_{d' in F} s_{d'}`` (uniform when every score is 0).
2. Relevance model RM1 over terms ``w``::

       P_RM1(w) = sum_{d in F} P(d|Q) * tf(w, d) / |d|

   keep the ``fb_terms`` terms of highest ``P_RM1`` (ties: lower term id first) and renormalise them
   to sum 1.
3. Interpolate with the question's own term distribution ``P(w|Q) = count(w, Q) / |Q|``::

       P_RM3(w) = lambda * P(w|Q) + (1 - lambda) * P_RM1(w)        (lambda = ``original_weight``)

4. Rescore each candidate ``a`` with BM25 under the weighted expanded query (bm25s's "lucene" BM25, no
   ``k1 + 1`` factor, as the index computes it)::

       rm3(a) = sum_w P_RM3(w) * idf(w) * tf(w, a) / (tf(w, a) + k1 * (1 - b + b * |a| / avgdl))
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy import sparse

__all__ = [
    "BM25_B",
    "BM25_K1",
    "ExpandedQuery",
    "rm3_expand",
    "rm3_scores",
    "rows_terms",
    "term_frequency_matrix",
    "weighted_bm25",
]

BM25_K1 = 1.2
BM25_B = 0.75


def term_frequency_matrix(
    offsets: ArrayLike, flat: ArrayLike, rows: ArrayLike, vocabulary_size: int
) -> sparse.csr_matrix:
    """Term counts of the answers at positions ``rows``: a CSR matrix (len(rows), vocabulary_size).

    ``offsets``/``flat``: every answer's term ids in order (answer ``i`` is ``flat[offsets[i]:offsets[i+1]]``).
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    flat = np.asarray(flat)
    if flat.dtype.kind not in "iu":
        flat = flat.astype(np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    if offsets.ndim != 1 or len(offsets) < 1 or offsets[0] != 0 or np.any(np.diff(offsets) < 0):
        raise ValueError("offsets must start at 0 and never decrease")
    if offsets[-1] != len(flat):
        raise ValueError("offsets must end at len(flat)")
    if rows.ndim != 1 or (len(rows) and (rows.min() < 0 or rows.max() >= len(offsets) - 1)):
        raise ValueError("rows must be answer positions within offsets")
    if len(flat) and (flat.min() < 0 or flat.max() >= vocabulary_size):
        raise ValueError("term ids must be < vocabulary_size")
    starts, ends = offsets[rows], offsets[rows + 1]
    lengths = ends - starts
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    # Each row's positions in ``flat``, row after row: starts[i], starts[i] + 1, ... ends[i] - 1.
    index = np.arange(indptr[-1]) + np.repeat(starts - indptr[:-1], lengths)
    matrix = sparse.csr_matrix(
        (np.ones(len(index), dtype=np.float64), flat[index].astype(np.int32), indptr),
        shape=(len(rows), vocabulary_size),
    )
    matrix.sum_duplicates()
    return matrix


def rows_terms(offsets: ArrayLike, flat: ArrayLike, rows: ArrayLike) -> tuple[NDArray[np.int64], np.ndarray]:
    """The term lists of the answers at ``rows`` alone, as ``(offsets, flat)`` of their own (row ``i`` is
    answer ``rows[i]``): what ``term_frequency_matrix(*rows_terms(...), range(len(rows)), V)`` takes
    to build the rows without reading (or checking) every answer's terms."""
    offsets = np.asarray(offsets, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    starts = offsets[rows]
    lengths = offsets[rows + 1] - starts
    own = np.concatenate([[0], np.cumsum(lengths)])
    return own, np.asarray(flat)[np.arange(own[-1]) + np.repeat(starts - own[:-1], lengths)]


class ExpandedQuery:
    """The RM3 query: ``terms`` (ids, ascending) and their ``weights`` (summing to 1)."""

    __slots__ = ("terms", "weights")

    def __init__(self, terms: NDArray[np.int64], weights: NDArray[np.float64]) -> None:
        self.terms = terms
        self.weights = weights

    def as_dict(self) -> dict[int, float]:
        return {int(t): float(w) for t, w in zip(self.terms, self.weights, strict=True)}


def _check_tf(matrix: sparse.spmatrix, name: str) -> sparse.csr_matrix:
    if not sparse.issparse(matrix):
        raise ValueError(f"{name} must be a scipy.sparse matrix")
    csr = sparse.csr_matrix(matrix, dtype=np.float64)
    if csr.nnz and (csr.data.min() < 0 or not np.all(np.isfinite(csr.data))):
        raise ValueError(f"{name} must hold finite counts >= 0")
    return csr


def rm3_expand(
    query_terms: ArrayLike,
    feedback_tf: sparse.spmatrix,
    feedback_scores: ArrayLike,
    *,
    fb_terms: int = 10,
    original_weight: float = 0.5,
) -> ExpandedQuery:
    """The RM3 expanded query (steps 1-3 of the module docstring).

    ``query_terms``: the question's term ids (repeats count); ``feedback_tf``: (m, V) term counts of the
    feedback answers; ``feedback_scores``: their m first-retrieval scores (>= 0).
    """
    tf = _check_tf(feedback_tf, "feedback_tf")
    scores = np.asarray(feedback_scores, dtype=np.float64)
    query = np.asarray(query_terms, dtype=np.int64)
    if scores.shape != (tf.shape[0],) or np.any(scores < 0) or not np.all(np.isfinite(scores)):
        raise ValueError("feedback_scores must hold one finite score >= 0 per feedback row")
    if query.ndim != 1 or (len(query) and (query.min() < 0 or query.max() >= tf.shape[1])):
        raise ValueError("query_terms must be term ids within the vocabulary")
    if isinstance(fb_terms, bool) or not isinstance(fb_terms, (int, np.integer)) or fb_terms < 0:
        raise ValueError("fb_terms must be an int >= 0")
    if not 0.0 <= original_weight <= 1.0:
        raise ValueError("original_weight must be within [0, 1]")
    vocabulary = tf.shape[1]
    p_query = np.bincount(query, minlength=vocabulary).astype(np.float64)
    if p_query.sum() > 0:
        p_query /= p_query.sum()
    rm1 = np.zeros(vocabulary)
    lengths = np.asarray(tf.sum(axis=1)).ravel()
    usable = lengths > 0
    if tf.shape[0] and usable.any() and fb_terms > 0:
        doc_weight = scores if scores[usable].sum() > 0 else np.ones_like(scores)
        doc_weight = np.where(usable, doc_weight, 0.0)
        doc_weight = doc_weight / doc_weight.sum()
        rm1 = np.asarray(tf.T @ (doc_weight / np.where(usable, lengths, 1.0))).ravel()
        # Top fb_terms terms of positive weight, ties to the lower term id (lexsort: the last key is the
        # primary one); only the feedback answers' terms have a weight, so only they are sorted.
        weighted = np.flatnonzero(rm1 > 0)
        keep = weighted[np.lexsort((weighted, -rm1[weighted]))][:fb_terms]
        trimmed = np.zeros(vocabulary)
        trimmed[keep] = rm1[keep]
        rm1 = trimmed / trimmed.sum() if trimmed.sum() > 0 else trimmed
    if rm1.sum() == 0:  # no feedback: the question alone
        combined = p_query
    elif p_query.sum() == 0:
        combined = rm1
    else:
        combined = original_weight * p_query + (1 - original_weight) * rm1
    terms = np.flatnonzero(combined > 0)
    return ExpandedQuery(terms=terms, weights=combined[terms])


def weighted_bm25(
    term_weights: dict[int, float] | ExpandedQuery,
    candidate_tf: sparse.spmatrix,
    idf: ArrayLike,
    average_length: float,
    *,
    lengths: ArrayLike | None = None,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> NDArray[np.float64]:
    """``sum_w weight_w * idf(w) * tf / (tf + k1 * (1 - b + b * |a| / avgdl))`` for each candidate row.

    ``lengths``: each candidate's length in terms (default: its row sum, right when the rows count every
    term of the answer).
    """
    tf = _check_tf(candidate_tf, "candidate_tf")
    idf = np.asarray(idf, dtype=np.float64)
    if idf.shape != (tf.shape[1],):
        raise ValueError("idf must have one value per vocabulary column")
    if not (average_length > 0 and np.isfinite(average_length)):
        raise ValueError("average_length must be > 0")
    if k1 < 0 or not 0 <= b <= 1:
        raise ValueError("k1 must be >= 0 and b within [0, 1]")
    if isinstance(term_weights, ExpandedQuery):
        terms, weights = term_weights.terms, term_weights.weights
    else:
        terms = np.fromiter(term_weights.keys(), dtype=np.int64, count=len(term_weights))
        weights = np.fromiter(term_weights.values(), dtype=np.float64, count=len(term_weights))
    if len(terms) and (terms.min() < 0 or terms.max() >= tf.shape[1]):
        raise ValueError("term ids must be within the vocabulary")
    length = np.asarray(tf.sum(axis=1)).ravel() if lengths is None else np.asarray(lengths, dtype=np.float64)
    if length.shape != (tf.shape[0],):
        raise ValueError("lengths must have one value per candidate")
    sub = tf[:, terms].tocoo()
    norm = k1 * (1 - b + b * length / average_length)
    contribution = sub.data / (sub.data + norm[sub.row]) * idf[terms][sub.col] * weights[sub.col]
    return np.bincount(sub.row, weights=contribution, minlength=tf.shape[0]).astype(np.float64)


def rm3_scores(
    query_terms: ArrayLike,
    candidate_tf: sparse.spmatrix,
    feedback_tf: sparse.spmatrix,
    feedback_scores: ArrayLike,
    idf: ArrayLike,
    average_length: float,
    *,
    candidate_lengths: ArrayLike | None = None,
    fb_terms: int = 10,
    original_weight: float = 0.5,
    k1: float = BM25_K1,
    b: float = BM25_B,
) -> NDArray[np.float64]:
    """RM3 score of each candidate row (the whole module docstring): expand, then weighted BM25."""
    expanded = rm3_expand(
        query_terms, feedback_tf, feedback_scores, fb_terms=fb_terms, original_weight=original_weight
    )
    return weighted_bm25(expanded, candidate_tf, idf, average_length, lengths=candidate_lengths, k1=k1, b=b)
