"""Per-question ranking metrics, vectorised over many questions at once.

Array conventions (used by every function in this module):

``retrieved``
    2-D float array, shape ``(Q, D)``: ``retrieved[q, r]`` is the label (stars) of the answer that
    question ``q`` ranked at position ``r + 1``.  ``NaN`` means "no label": the answer is unlabelled,
    or the ranking of that question is shorter than ``D`` (padding).  Both count as "not relevant" and
    "not judged"; a 1-D array is treated as a single question.
``ideal``
    2-D float array, shape ``(Q, L)``: all known labels of each question, retrieved or not, in any
    order, padded with ``NaN`` (``0`` padding gives the same DCG values, but would count as a judged
    non-relevant label in :func:`recall_at_k` when ``threshold <= 0``).

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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

Gain = Literal["linear", "exponential"]
Discount = Literal["log2", "jarvelin_kekalainen"]
FloatArray = NDArray[np.float64]

__all__ = [
    "Discount",
    "Gain",
    "LabelArrays",
    "MeanResult",
    "RankingEvaluation",
    "dcg_at_k",
    "discount_divisors",
    "evaluate_rankings",
    "gains",
    "ideal_dcg_at_k",
    "judged_at_k",
    "label_arrays",
    "mean_ignoring_undefined",
    "ndcg_at_k",
    "precision_at_k",
    "recall_at_k",
    "reciprocal_rank_at_k",
    "success_at_k",
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


def _check_same_questions(retrieved: FloatArray, ideal: FloatArray) -> None:
    if retrieved.shape[0] != ideal.shape[0]:
        raise ValueError(
            f"retrieved has {retrieved.shape[0]} questions but ideal has {ideal.shape[0]}; they must match"
        )


def _check_choice(value: str, allowed: tuple[str, ...], name: str) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")


# ----------------------------------------------------------------------------------------- building blocks


def gains(labels: ArrayLike, gain: Gain = "linear") -> FloatArray:
    """Gain of each label: ``l`` (linear) or ``2**l - 1`` (exponential) when ``l > 0``, else ``0``.

    ``NaN`` (unlabelled) gives 0.
    """
    _check_choice(gain, ("linear", "exponential"), "gain")
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
    _check_choice(discount, ("log2", "jarvelin_kekalainen"), "discount")
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


def _top(matrix: FloatArray, k: int) -> FloatArray:
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
    return _at_cutoff(dcg_prefix(gains(_top(matrix, k), gain), discount), k)


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
    :func:`mean_ignoring_undefined`, or use ``np.nan_to_num`` for trec_eval's convention (0).
    """
    k = check_k(k)
    retrieved_m = as_label_matrix(retrieved)
    ideal_m = as_label_matrix(ideal, "ideal")
    _check_same_questions(retrieved_m, ideal_m)
    dcg = dcg_at_k(retrieved_m, k, gain=gain, discount=discount)
    idcg = ideal_dcg_at_k(ideal_m, k, gain=gain, discount=discount)
    return _safe_divide(dcg, idcg)


def _safe_divide(numerator: FloatArray, denominator: FloatArray) -> FloatArray:
    out = np.full(numerator.shape, np.nan, dtype=np.float64)
    np.divide(numerator, denominator, out=out, where=denominator > 0)
    return out


def _relevant(matrix: FloatArray, k: int, threshold: float) -> NDArray[np.bool_]:
    return _top(matrix, k) >= threshold  # NaN >= t is False


def success_at_k(retrieved: ArrayLike, k: int, threshold: float = 1) -> FloatArray:
    """Accuracy (success) at ``k``: ``1`` if some answer at rank ``<= k`` has ``label >= threshold``, else 0.

    trec_eval ``success.k`` with ``-l threshold``.
    """
    k = check_k(k)
    hit = np.asarray(_relevant(as_label_matrix(retrieved), k, threshold).any(axis=1))
    return hit.astype(np.float64)


def precision_at_k(retrieved: ArrayLike, k: int, threshold: float = 1) -> FloatArray:
    """Precision at ``k``: ``#{r <= k : l_r >= threshold} / k`` (missing ranks count as not relevant)."""
    k = check_k(k)
    return _relevant(as_label_matrix(retrieved), k, threshold).sum(axis=1) / float(k)


def recall_at_k(retrieved: ArrayLike, ideal: ArrayLike, k: int, threshold: float = 1) -> FloatArray:
    """Recall at ``k``: ``#{r <= k : l_r >= threshold} / #{known labels >= threshold}``.

    ``NaN`` (undefined) when the question has no known relevant answer.
    """
    k = check_k(k)
    retrieved_m = as_label_matrix(retrieved)
    ideal_m = as_label_matrix(ideal, "ideal")
    _check_same_questions(retrieved_m, ideal_m)
    found = _relevant(retrieved_m, k, threshold).sum(axis=1).astype(np.float64)
    known = (ideal_m >= threshold).sum(axis=1).astype(np.float64)
    return _safe_divide(found, known)


def reciprocal_rank_at_k(retrieved: ArrayLike, k: int, threshold: float = 1) -> FloatArray:
    """Reciprocal rank at ``k``: ``1 / r`` for the first rank ``r <= k`` with ``l_r >= threshold``, else 0."""
    k = check_k(k)
    relevant = _relevant(as_label_matrix(retrieved), k, threshold)
    if relevant.shape[1] == 0:
        return np.zeros(relevant.shape[0], dtype=np.float64)
    first = np.argmax(relevant, axis=1)
    return np.where(relevant.any(axis=1), 1.0 / (first + 1.0), 0.0)


def judged_at_k(retrieved: ArrayLike, k: int) -> FloatArray:
    """Judged at ``k``: ``#{r <= k : answer r has a label} / k`` (ir_measures ``Judged@k``).

    Missing ranks (rankings shorter than ``k``) count as unjudged.
    """
    k = check_k(k)
    return (~np.isnan(_top(as_label_matrix(retrieved), k))).sum(axis=1) / float(k)


# ----------------------------------------------------------------------------------------- means


@dataclass(frozen=True)
class MeanResult:
    """Mean over the questions where a metric is defined.

    ``mean`` is ``NaN`` when no question is defined; ``count_undefined`` is the number of questions left
    out (for NDCG: "no known good answer").
    """

    mean: float
    count: int
    count_undefined: int


def mean_ignoring_undefined(values: ArrayLike) -> MeanResult:
    """``mean = sum(v_q for defined q) / #defined``, ignoring ``NaN`` (undefined) values."""
    array = np.asarray(values, dtype=np.float64).ravel()
    defined = ~np.isnan(array)
    count = int(defined.sum())
    mean = float(array[defined].mean()) if count else math.nan
    return MeanResult(mean=mean, count=count, count_undefined=int(array.size - count))


# ----------------------------------------------------------------------------------------- ragged input


@dataclass(frozen=True)
class LabelArrays:
    """Dense label arrays built from ragged rankings (see the module docstring for the conventions).

    ``retrieved``: ``(Q, D)`` labels by rank, NaN when unlabelled or past the end of the ranking.
    ``lengths``: ``(Q,)`` number of answers each question retrieved.
    ``ideal``: ``(Q, L)`` all known labels per question, sorted descending, NaN padded.
    """

    retrieved: FloatArray
    lengths: NDArray[np.int64]
    ideal: FloatArray


def _check_label(value: object, question: int, answer: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.integer | np.floating):
        raise ValueError(f"question {question}: label of {answer!r} must be a number, got {value!r}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"question {question}: label of {answer!r} must be finite, got {value!r}")
    return number


def label_arrays(
    rankings: Sequence[Sequence[str]],
    labels: Sequence[Mapping[str, float]],
    scores: Sequence[Sequence[float]] | None = None,
) -> LabelArrays:
    """Build :class:`LabelArrays` from ranked answer ids per question and the known labels per question.

    ``rankings[q]`` lists question ``q``'s answer ids best first; ``labels[q]`` maps answer id to label
    (answers missing from it are unlabelled).  If ``scores`` is given (``scores[q][i]`` for
    ``rankings[q][i]``), each ranking is first re-ordered trec_eval style: by score descending, ties by
    answer id descending.  Raises ``ValueError`` on mismatched lengths, NaN scores, repeated answers or
    non-finite labels.
    """
    if isinstance(rankings, str | bytes) or isinstance(labels, str | bytes | Mapping):
        raise ValueError("rankings and labels must be sequences with one entry per question")
    n_questions = len(rankings)
    if len(labels) != n_questions:
        raise ValueError(f"got {n_questions} rankings but {len(labels)} label mappings; they must match")
    if scores is not None and len(scores) != n_questions:
        raise ValueError(f"got {n_questions} rankings but {len(scores)} score lists; they must match")

    ordered: list[Sequence[str]] = []
    for q, ranking in enumerate(rankings):
        if isinstance(ranking, str | bytes):
            raise ValueError(f"question {q}: ranking must be a sequence of answer ids, not a string")
        if scores is not None:
            row_scores = np.asarray(scores[q], dtype=np.float64)
            if row_scores.shape != (len(ranking),):
                raise ValueError(
                    f"question {q}: {len(ranking)} answers but {row_scores.size} scores; they must match"
                )
            if np.isnan(row_scores).any():
                raise ValueError(f"question {q}: scores contain NaN")
            ranking = [doc for _, doc in sorted(zip(row_scores.tolist(), ranking, strict=True), reverse=True)]
        if len(set(ranking)) != len(ranking):
            raise ValueError(f"question {q}: the ranking lists the same answer more than once")
        ordered.append(ranking)

    lengths = np.fromiter((len(r) for r in ordered), dtype=np.int64, count=n_questions)
    depth = int(lengths.max()) if n_questions else 0
    retrieved = np.full((n_questions, depth), np.nan, dtype=np.float64)
    label_counts = [len(m) for m in labels]
    ideal = np.full((n_questions, max(label_counts, default=0)), np.nan, dtype=np.float64)
    for q, (ranking, known) in enumerate(zip(ordered, labels, strict=True)):
        if not isinstance(known, Mapping):
            raise ValueError(f"question {q}: labels must be a mapping of answer id to label")
        row = [_check_label(v, q, a) for a, v in known.items()]
        ideal[q, : len(row)] = row
        retrieved[q, : len(ranking)] = [known.get(a, np.nan) for a in ranking]
    if ideal.shape[1]:
        ideal = sorted_ideal(ideal)
    return LabelArrays(retrieved=retrieved, lengths=lengths, ideal=ideal)


@dataclass(frozen=True)
class RankingEvaluation:
    """Per-question results of :func:`evaluate_rankings` (1-D arrays, one entry per question).

    ``ndcg`` and ``recall`` are NaN for questions without a known relevant answer; use
    :meth:`mean_ndcg` for the mean and the number of such questions.
    """

    k: int
    accuracy_k: int
    threshold: float
    dcg: FloatArray
    ideal_dcg: FloatArray
    ndcg: FloatArray
    success: FloatArray  # accuracy@accuracy_k
    precision: FloatArray
    recall: FloatArray
    reciprocal_rank: FloatArray
    judged: FloatArray
    unlabelled_in_top_k: NDArray[np.int64]

    @property
    def no_known_good_answer(self) -> int:
        """Questions whose NDCG is undefined (no known relevant answer)."""
        return int(np.isnan(self.ndcg).sum())

    def mean_ndcg(self) -> MeanResult:
        """Mean NDCG@k over questions with a known good answer, and how many had none."""
        return mean_ignoring_undefined(self.ndcg)


def evaluate_rankings(
    rankings: Sequence[Sequence[str]],
    labels: Sequence[Mapping[str, float]],
    k: int = 10,
    accuracy_k: int = 5,
    threshold: float = 1,
    gain: Gain = "linear",
    discount: Discount = "log2",
    scores: Sequence[Sequence[float]] | None = None,
) -> RankingEvaluation:
    """Evaluate many questions at once from ragged Python input.

    ``rankings[q]``: answer ids of question ``q``, best first.  ``labels[q]``: ``{answer id: stars}``
    for every labelled answer of question ``q`` (retrieved or not; they form the ideal ranking).
    Returns DCG@k, IDCG@k, NDCG@k (NaN when there is no known good answer), accuracy@accuracy_k
    (label >= threshold), precision@k, recall@k, reciprocal rank@k, judged@k and the number of
    retrieved answers in the top k without a label.  See :func:`label_arrays` for ``scores``.
    """
    k = check_k(k)
    accuracy_k = check_k(accuracy_k, "accuracy_k")
    _check_choice(gain, ("linear", "exponential"), "gain")
    _check_choice(discount, ("log2", "jarvelin_kekalainen"), "discount")
    arrays = label_arrays(rankings, labels, scores)
    retrieved, ideal = arrays.retrieved, arrays.ideal
    dcg = dcg_at_k(retrieved, k, gain=gain, discount=discount)
    idcg = ideal_dcg_at_k(ideal, k, gain=gain, discount=discount)
    top = _top(retrieved, k)
    labelled = (~np.isnan(top)).sum(axis=1)
    return RankingEvaluation(
        k=k,
        accuracy_k=accuracy_k,
        threshold=float(threshold),
        dcg=dcg,
        ideal_dcg=idcg,
        ndcg=_safe_divide(dcg, idcg),
        success=success_at_k(retrieved, accuracy_k, threshold),
        precision=precision_at_k(retrieved, k, threshold),
        recall=recall_at_k(retrieved, ideal, k, threshold),
        reciprocal_rank=reciprocal_rank_at_k(retrieved, k, threshold),
        judged=judged_at_k(retrieved, k),
        unlabelled_in_top_k=(np.minimum(arrays.lengths, k) - labelled).astype(np.int64),
    )
