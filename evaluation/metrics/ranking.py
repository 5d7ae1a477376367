"""Per-question ranking metrics, vectorised over many questions at once.

Array conventions, gains and discounts are those of :mod:`rankers.ndcg`, which defines DCG and NDCG@k
once for the evaluation runs and the learners alike; this module re-exports them beside the other
metrics. In short: ``retrieved`` is a ``(Q, D)`` float array of the labels (stars) by rank, ``NaN`` for
an unlabelled answer or past the end of a ranking; ``ideal`` a ``(Q, L)`` array of each question's known
labels, retrieved or not, ``NaN`` padded. Every metric returns a 1-D ``float64`` array with one value per
question. Ranks are 1-based in the formulas: ``l_r`` is the label at rank ``r``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from rankers.ndcg import (
    Discount,
    FloatArray,
    Gain,
    as_label_matrix,
    check_choice,
    check_k,
    check_same_questions,
    dcg_at_k,
    discount_divisors,
    gains,
    ideal_dcg_at_k,
    ndcg_at_k,
    safe_divide,
    sorted_ideal,
    top_ranks,
)

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


def _relevant(matrix: FloatArray, k: int, threshold: float) -> NDArray[np.bool_]:
    return top_ranks(matrix, k) >= threshold  # NaN >= t is False


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
    check_same_questions(retrieved_m, ideal_m)
    found = _relevant(retrieved_m, k, threshold).sum(axis=1).astype(np.float64)
    known = (ideal_m >= threshold).sum(axis=1).astype(np.float64)
    return safe_divide(found, known)


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
    return (~np.isnan(top_ranks(as_label_matrix(retrieved), k))).sum(axis=1) / float(k)


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
    check_choice(gain, ("linear", "exponential"), "gain")
    check_choice(discount, ("log2", "jarvelin_kekalainen"), "discount")
    arrays = label_arrays(rankings, labels, scores)
    retrieved, ideal = arrays.retrieved, arrays.ideal
    dcg = dcg_at_k(retrieved, k, gain=gain, discount=discount)
    idcg = ideal_dcg_at_k(ideal, k, gain=gain, discount=discount)
    top = top_ranks(retrieved, k)
    labelled = (~np.isnan(top)).sum(axis=1)
    return RankingEvaluation(
        k=k,
        accuracy_k=accuracy_k,
        threshold=float(threshold),
        dcg=dcg,
        ideal_dcg=idcg,
        ndcg=safe_divide(dcg, idcg),
        success=success_at_k(retrieved, accuracy_k, threshold),
        precision=precision_at_k(retrieved, k, threshold),
        recall=recall_at_k(retrieved, ideal, k, threshold),
        reciprocal_rank=reciprocal_rank_at_k(retrieved, k, threshold),
        judged=judged_at_k(retrieved, k),
        unlabelled_in_top_k=(np.minimum(arrays.lengths, k) - labelled).astype(np.int64),
    )
