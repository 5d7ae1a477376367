"""DCG and NDCG@k, the one definition: the evaluation runs score with it (``evaluation.metrics``
re-exports it) and the learners here check against it (``rankers.fusion.scored_ndcg_at_k`` ranks by
score, then asks this module). Pure numpy, vectorised over many questions at once.

Array conventions:

``retrieved``
    2-D float array, shape ``(Q, D)``: ``retrieved[q, r]`` is the label (stars) of the answer that
    question ``q`` ranked at position ``r + 1``.  ``NaN`` means "no label": the answer is unlabelled,
    or the ranking of that question is shorter than ``D`` (padding).  Both count as "not relevant" and
    "not judged"; a 1-D array is treated as a single question.
``ideal``
    2-D float array, shape ``(Q, L)``: all known labels of each question, retrieved or not, in any
    order, padded with ``NaN`` (``0`` padding gives the same DCG values, but would count as a judged
    non-relevant label in ``evaluation.metrics.recall_at_k`` when ``threshold <= 0``).

Every metric returns a 1-D ``float64`` array with one value per question.  Ranks are 1-based in the
formulas: ``l_r`` is the label at rank ``r``.

Gains (``gain=``):

* ``"linear"`` (default, trec_eval ``ndcg_cut``): ``g(l) = l`` if ``l > 0`` else ``0``.
* ``"exponential"`` (Burges et al.): ``g(l) = 2**l - 1`` if ``l > 0`` else ``0``.

Discounts (``discount=``), as the divisor ``d(r)`` of the gain at rank ``r``:

* ``"log2"`` (default, trec_eval): ``d(r) = log2(r + 1)``, so rank 1 is undiscounted.
* ``"jarvelin_kekalainen"`` (the original 2002 definition with log base 2): ``d(r) = 1`` for
  ``r < 2`` and ``d(r) = log2(r)`` for ``r >= 2``, so ranks 1 and 2 are both undiscounted.

Unlabelled answers and labels ``<= 0`` add nothing to DCG.  Sums are accumulated rank by rank (as
trec_eval does), so values are bit-for-bit reproducible.
"""

from __future__ import annotations

import functools
import math
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

Gain = Literal["linear", "exponential"]
Discount = Literal["log2", "jarvelin_kekalainen"]
FloatArray = NDArray[np.float64]

__all__ = [
    "Discount",
    "FloatArray",
    "Gain",
    "as_label_matrix",
    "check_choice",
    "check_k",
    "check_same_questions",
    "dcg_at_k",
    "dcg_prefix",
    "discount_divisors",
    "gains",
    "ideal_dcg_at_k",
    "ndcg_at_k",
    "safe_divide",
    "sorted_ideal",
    "top_ranks",
]


# ----------------------------------------------------------------------------------------- validation


def check_k(k: object, name: str = "k") -> int:
    """Return ``k`` as an ``int`` after checking it is a positive integer (``ValueError`` otherwise)."""
    if isinstance(k, bool) or not isinstance(k, int | np.integer):
        raise ValueError(f"{name} must be a positive integer, got {k!r}")
    if k < 1:
        raise ValueError(f"{name} must be a positive integer, got {k}")
    return int(k)


def as_label_matrix(values: ArrayLike, name: str = "retrieved") -> FloatArray:
    """Convert labels to a 2-D float64 array (1-D input is one question); reject infinities."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric labels: {exc}") from None
    if array.ndim == 1:
        array = array[np.newaxis, :]
    if array.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (questions x ranks), got {array.ndim} dimensions")
    if np.isinf(array).any():
        raise ValueError(f"{name} contains an infinite label; use NaN for 'unlabelled'")
    return array


def check_same_questions(retrieved: FloatArray, ideal: FloatArray) -> None:
    """``ValueError`` unless both matrices have one row per question, the same questions."""
    if retrieved.shape[0] != ideal.shape[0]:
        raise ValueError(
            f"retrieved has {retrieved.shape[0]} questions but ideal has {ideal.shape[0]}; they must match"
        )


def check_choice(value: str, allowed: tuple[str, ...], name: str) -> None:
    """``ValueError`` unless ``value`` (a gain or discount name) is one of ``allowed``."""
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


# ----------------------------------------------------------------------------------------- building blocks


def gains(labels: ArrayLike, gain: Gain = "linear") -> FloatArray:
    """Gain of each label: ``l`` (linear) or ``2**l - 1`` (exponential) when ``l > 0``, else ``0``.

    ``NaN`` (unlabelled) gives 0.
    """
    check_choice(gain, ("linear", "exponential"), "gain")
    array = np.asarray(labels, dtype=np.float64)
    positive = array > 0  # NaN > 0 is False
    if gain == "linear":
        return np.where(positive, array, 0.0)
    with np.errstate(over="ignore", invalid="ignore"):
        # expm1(l ln 2) == 2**l - 1, accurate for tiny labels too
        return np.where(positive, np.expm1(np.where(positive, array, 0.0) * math.log(2.0)), 0.0)


def discount_divisors(n: int, discount: Discount = "log2") -> FloatArray:
    """Divisors ``d(1..n)`` of the gain at each rank (see the module docstring).

    ``log2``: ``d(r) = log2(r + 1)``; ``jarvelin_kekalainen``: ``d(r) = max(1, log2(r))``.
    Computed with the C library's ``log2`` (``math.log2``) so values match trec_eval exactly.
    """
    check_choice(discount, ("log2", "jarvelin_kekalainen"), "discount")
    return np.array(_divisors(n, discount), dtype=np.float64)


@functools.lru_cache(maxsize=64)
def _divisors(n: int, discount: str) -> tuple[float, ...]:
    if discount == "log2":
        return tuple([1.0] + [math.log2(r + 1) for r in range(2, n + 1)])[:n]
    return tuple([1.0] + [max(1.0, math.log2(r)) for r in range(2, n + 1)])[:n]


def dcg_prefix(gain_matrix: FloatArray, discount: Discount = "log2") -> FloatArray:
    """Cumulative DCG: ``out[q, r-1] = sum_{i<=r} gain[q, i] / d(i)``, summed rank by rank."""
    n = gain_matrix.shape[1]
    if n == 0:
        return np.zeros(gain_matrix.shape, dtype=np.float64)
    return np.cumsum(gain_matrix / discount_divisors(n, discount), axis=1)


def _at_cutoff(prefix: FloatArray, k: int) -> FloatArray:
    """Value of a cumulative matrix at rank ``k`` (rankings shorter than ``k`` keep their total)."""
    if prefix.shape[1] == 0:
        return np.zeros(prefix.shape[0], dtype=np.float64)
    return prefix[:, min(k, prefix.shape[1]) - 1].copy()


def top_ranks(matrix: FloatArray, k: int) -> FloatArray:
    """The first ``k`` ranks of each question (all of them when a ranking is shorter)."""
    return matrix[:, :k]


def sorted_ideal(ideal: FloatArray, k: int | None = None) -> FloatArray:
    """Labels of each question sorted descending (NaN last), optionally cut at ``k``."""
    filled = np.where(np.isnan(ideal), -np.inf, ideal)
    if k is not None and 0 < k < filled.shape[1]:
        # Only the k best labels matter: partition, then sort those.
        filled = -np.partition(-filled, k - 1, axis=1)[:, :k]
    out = -np.sort(-filled, axis=1)
    out[np.isneginf(out)] = np.nan
    return out


# ----------------------------------------------------------------------------------------- metrics


def dcg_at_k(
    retrieved: ArrayLike, k: int, *, gain: Gain = "linear", discount: Discount = "log2"
) -> FloatArray:
    """Discounted cumulative gain at ``k``: ``DCG@k = sum_{r=1..k} g(l_r) / d(r)``.

    With the defaults this is trec_eval's DCG: ``sum_{r<=k, l_r>0} l_r / log2(r + 1)``.
    Example: labels 3, 2, 3, 0, 1, 2 give ``DCG@6 = 6.861``.
    """
    k = check_k(k)
    matrix = as_label_matrix(retrieved)
    return _at_cutoff(dcg_prefix(gains(top_ranks(matrix, k), gain), discount), k)


def ideal_dcg_at_k(
    ideal: ArrayLike, k: int, *, gain: Gain = "linear", discount: Discount = "log2"
) -> FloatArray:
    """Ideal DCG at ``k``: the DCG@k of all known labels of the question sorted descending.

    ``IDCG@k = sum_{r=1..k} g(l*_r) / d(r)`` where ``l*`` are the question's known labels, retrieved or
    not, in descending order (trec_eval ``ndcg_cut``).
    """
    k = check_k(k)
    matrix = as_label_matrix(ideal, "ideal")
    return _at_cutoff(dcg_prefix(gains(sorted_ideal(matrix, k), gain), discount), k)


def ndcg_at_k(
    retrieved: ArrayLike,
    ideal: ArrayLike,
    k: int,
    *,
    gain: Gain = "linear",
    discount: Discount = "log2",
) -> FloatArray:
    """Normalised DCG at ``k``: ``NDCG@k = DCG@k / IDCG@k``, in ``[0, 1]``.

    Undefined (``NaN``) for a question without a known relevant answer (``IDCG@k = 0``); average with
    ``evaluation.metrics.mean_ignoring_undefined``, or use ``np.nan_to_num`` for trec_eval's convention (0).
    """
    k = check_k(k)
    retrieved_m = as_label_matrix(retrieved)
    ideal_m = as_label_matrix(ideal, "ideal")
    check_same_questions(retrieved_m, ideal_m)
    dcg = dcg_at_k(retrieved_m, k, gain=gain, discount=discount)
    idcg = ideal_dcg_at_k(ideal_m, k, gain=gain, discount=discount)
    return safe_divide(dcg, idcg)


def safe_divide(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    """``numerator / denominator``, NaN (undefined) where the denominator is not positive."""
    out = np.full(numerator.shape, np.nan, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out
