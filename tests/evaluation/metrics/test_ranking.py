"""Per-question metrics: the worked examples of the issue, options, hand-computed values, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from evaluation.metrics import (
    dcg_at_k,
    discount_divisors,
    evaluate_rankings,
    gains,
    ideal_dcg_at_k,
    judged_at_k,
    label_arrays,
    mean_ignoring_undefined,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank_at_k,
    success_at_k,
)

QUOTED = 5e-4  # values quoted to 3 decimals
NAN = math.nan


# ---------------------------------------------------------------- worked examples (all: linear gain)


def test_dcg_at_k_worked_example_linear_gain():
    # relevances 3,2,3,0,1,2 (trec_eval convention: gain = label, discount log2(rank + 1))
    assert dcg_at_k([3, 2, 3, 0, 1, 2], 6)[0] == pytest.approx(6.861, abs=QUOTED)


def test_ideal_dcg_at_k_includes_known_labels_not_retrieved():
    # two further known labels, 3 and 2, were not retrieved: ideal is 3,3,3,2,2,2 cut at 6
    assert ideal_dcg_at_k([3, 2, 3, 0, 1, 2, 3, 2], 6)[0] == pytest.approx(8.740, abs=QUOTED)


def test_ndcg_at_k_worked_example_with_unretrieved_labels():
    value = ndcg_at_k([3, 2, 3, 0, 1, 2], [3, 2, 3, 0, 1, 2, 3, 2], 6)[0]
    assert value == pytest.approx(0.785, abs=QUOTED)


def test_ndcg_at_k_two_rankings_against_ideal_32100():
    ideal = [[3, 2, 1, 0, 0], [3, 2, 1, 0, 0]]
    values = ndcg_at_k([[3, 2, 0, 0, 0], [2, 1, 3, 0, 0]], ideal, 5)
    assert values == pytest.approx([0.895, 0.868], abs=QUOTED)


def test_ndcg_at_k_retriever_example_at_5_and_3():
    labels = {"chunk_17": 3, "chunk_42": 1, "chunk_08": 1}
    ranking = ["chunk_17", "chunk_91", "chunk_42", "chunk_08", "chunk_33"]
    at5 = evaluate_rankings([ranking], [labels], k=5)
    at3 = evaluate_rankings([ranking], [labels], k=3)
    assert at5.ndcg[0] == pytest.approx(0.952, abs=QUOTED)
    assert at3.ndcg[0] == pytest.approx(0.847, abs=QUOTED)


def test_dcg_at_k_jarvelin_kekalainen_33220_is_8_26():
    # the Retrieve-and-Rank write-up quotes 8.26 (8.3): 3 + 3/1 + 2/log2(3) + 2/log2(4) + 0
    value = dcg_at_k([3, 3, 2, 2, 0], 5, discount="jarvelin_kekalainen")[0]
    assert value == pytest.approx(8.26, abs=5e-3)
    assert value == pytest.approx(6 + 2 / math.log2(3) + 1, abs=1e-12)


def test_ndcg_at_k_jarvelin_kekalainen_write_up_example():
    # 0,2,3,1,3 against ideal 3,3,2,1,0 (only reproduced with the JK discount, linear gain).  The
    # write-up's DCG of 5.69 used logarithms rounded to 2 decimals (3/1.58 + 3/2.32); exactly it is
    # 2 + 3/log2(3) + 1/2 + 3/log2(5) = 5.6848, hence the wider tolerance for that one figure.
    retrieved, ideal = [0, 2, 3, 1, 3], [3, 3, 2, 1, 0]
    dcg = dcg_at_k(retrieved, 5, discount="jarvelin_kekalainen")[0]
    assert dcg == pytest.approx(5.69, abs=1e-2)
    assert dcg == pytest.approx(2 + 3 / math.log2(3) + 0.5 + 3 / math.log2(5), abs=1e-12)
    assert ideal_dcg_at_k(ideal, 5, discount="jarvelin_kekalainen")[0] == pytest.approx(7.76, abs=5e-3)
    assert ndcg_at_k(retrieved, ideal, 5, discount="jarvelin_kekalainen")[0] == pytest.approx(0.73, abs=5e-3)


# ---------------------------------------------------------------- options


def test_gains_exponential_is_two_to_the_label_minus_one():
    assert gains([3, 2, 1, 0, -1, NAN], "exponential") == pytest.approx([7, 3, 1, 0, 0, 0])


def test_gains_linear_drops_unlabelled_and_non_positive():
    assert gains([3, 0.5, 0, -2, NAN]) == pytest.approx([3, 0.5, 0, 0, 0])


def test_dcg_at_k_exponential_gain_hand_computed():
    # (2^3-1)/1 + (2^2-1)/log2(3) + 0 + (2^1-1)/log2(5)
    expected = 7 + 3 / math.log2(3) + 1 / math.log2(5)
    assert dcg_at_k([3, 2, 0, 1], 4, gain="exponential")[0] == pytest.approx(expected, abs=1e-12)


def test_discount_divisors_log2_and_jarvelin_kekalainen():
    assert discount_divisors(4) == pytest.approx([1, math.log2(3), 2, math.log2(5)])
    assert discount_divisors(4, "jarvelin_kekalainen") == pytest.approx([1, 1, math.log2(3), 2])


def test_dcg_at_k_unlabelled_adds_nothing():
    assert dcg_at_k([NAN, 2, NAN], 3)[0] == pytest.approx(2 / math.log2(3))


def test_dcg_at_k_short_ranking_keeps_its_total():
    assert dcg_at_k([[3, NAN, NAN], [3, 1, 1]], 2) == pytest.approx([3, 3 + 1 / math.log2(3)])


def test_ndcg_at_k_no_known_good_answer_is_nan():
    values = ndcg_at_k([[0, NAN], [1, 0]], [[0, 0], [1, 0]], 2)
    assert math.isnan(values[0])
    assert values[1] == 1.0


# ---------------------------------------------------------------- the other metrics, hand computed

RANKED = [[NAN, 0, 2, 1, NAN], [3, NAN, 0, NAN, NAN], [0, 0, 0, 0, 0]]
IDEAL = [[2, 1, 1, 0, 0], [3, 2, NAN, NAN, NAN], [0, 0, NAN, NAN, NAN]]


def test_success_at_k_threshold_one_and_two():
    assert success_at_k(RANKED, 2) == pytest.approx([0, 1, 0])
    assert success_at_k(RANKED, 3) == pytest.approx([1, 1, 0])
    assert success_at_k(RANKED, 5, threshold=3) == pytest.approx([0, 1, 0])


def test_precision_at_k_counts_missing_ranks_as_not_relevant():
    assert precision_at_k(RANKED, 4) == pytest.approx([2 / 4, 1 / 4, 0])
    assert precision_at_k([[1, 1]], 4) == pytest.approx([0.5])


def test_recall_at_k_over_all_known_relevant():
    values = recall_at_k(RANKED, IDEAL, 3)
    assert values[:2] == pytest.approx([1 / 3, 1 / 2])
    assert math.isnan(values[2])  # no known relevant answer


def test_reciprocal_rank_at_k_first_relevant_within_k():
    assert reciprocal_rank_at_k(RANKED, 5) == pytest.approx([1 / 3, 1, 0])
    assert reciprocal_rank_at_k(RANKED, 2) == pytest.approx([0, 1, 0])


def test_judged_at_k_share_of_top_k_with_a_label():
    assert judged_at_k(RANKED, 4) == pytest.approx([3 / 4, 2 / 4, 1])
    assert judged_at_k([[1, 2]], 4) == pytest.approx([2 / 4])


def test_mean_ignoring_undefined_counts_the_undefined():
    result = mean_ignoring_undefined([0.5, NAN, 1.0, NAN])
    assert result.mean == pytest.approx(0.75)
    assert (result.count, result.count_undefined) == (2, 2)


def test_mean_ignoring_undefined_all_undefined_is_nan():
    result = mean_ignoring_undefined([NAN])
    assert math.isnan(result.mean) and result.count == 0 and result.count_undefined == 1


# ---------------------------------------------------------------- ragged API


def test_evaluate_rankings_all_fields_hand_computed():
    rankings = [["a", "b", "c"], ["x"], ["p", "q"]]
    labels = [{"a": 0, "c": 2, "z": 3}, {"y": 0}, {"p": 1, "q": 3}]
    result = evaluate_rankings(rankings, labels, k=2, accuracy_k=1)
    assert result.dcg == pytest.approx([0, 0, 1 + 3 / math.log2(3)])
    assert result.ideal_dcg == pytest.approx([3 + 2 / math.log2(3), 0, 3 + 1 / math.log2(3)])
    assert result.ndcg[0] == 0 and math.isnan(result.ndcg[1])
    assert result.success == pytest.approx([0, 0, 1])
    assert result.precision == pytest.approx([0, 0, 1])
    assert result.recall[0] == 0 and math.isnan(result.recall[1]) and result.recall[2] == 1
    assert result.reciprocal_rank == pytest.approx([0, 0, 1])
    assert result.judged == pytest.approx([1 / 2, 0, 1])
    assert result.unlabelled_in_top_k.tolist() == [1, 1, 0]
    assert result.no_known_good_answer == 1
    mean = result.mean_ndcg()
    assert (mean.count, mean.count_undefined) == (2, 1)


def test_evaluate_rankings_scores_reorder_trec_style():
    # scores descending, ties by answer id descending ("b" before "a")
    result = evaluate_rankings([["a", "b", "c"]], [{"a": 3}], k=1, scores=[[1.0, 1.0, 0.5]])
    assert result.dcg[0] == 0
    result = evaluate_rankings([["a", "b", "c"]], [{"a": 3}], k=2, scores=[[1.0, 1.0, 0.5]])
    assert result.dcg[0] == pytest.approx(3 / math.log2(3))


def test_label_arrays_pads_with_nan_and_sorts_ideal():
    arrays = label_arrays([["a", "b"], []], [{"b": 1, "c": 3}, {}])
    assert arrays.lengths.tolist() == [2, 0]
    assert np.isnan(arrays.retrieved[0, 0]) and arrays.retrieved[0, 1] == 1
    assert np.isnan(arrays.retrieved[1]).all()
    assert arrays.ideal[0].tolist() == [3, 1]


def test_evaluate_rankings_no_questions_gives_empty_arrays():
    result = evaluate_rankings([], [])
    assert result.ndcg.shape == (0,)


# ---------------------------------------------------------------- bad input


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3"])
def test_dcg_at_k_bad_k_raises(k):
    with pytest.raises(ValueError, match="k must be a positive integer"):
        dcg_at_k([1, 2], k)


def test_ndcg_at_k_mismatched_question_counts_raises():
    with pytest.raises(ValueError, match="must match"):
        ndcg_at_k([[1], [2]], [[1]], 1)


def test_evaluate_rankings_mismatched_lengths_raises():
    with pytest.raises(ValueError, match="must match"):
        evaluate_rankings([["a"], ["b"]], [{"a": 1}])


def test_evaluate_rankings_nan_scores_raises():
    with pytest.raises(ValueError, match="NaN"):
        evaluate_rankings([["a", "b"]], [{"a": 1}], scores=[[0.5, math.nan]])


def test_evaluate_rankings_score_count_mismatch_raises():
    with pytest.raises(ValueError, match="scores"):
        evaluate_rankings([["a", "b"]], [{"a": 1}], scores=[[0.5]])


def test_evaluate_rankings_repeated_answer_raises():
    with pytest.raises(ValueError, match="more than once"):
        evaluate_rankings([["a", "a"]], [{"a": 1}])


@pytest.mark.parametrize("label", [math.nan, math.inf, "3", None])
def test_evaluate_rankings_bad_label_raises(label):
    with pytest.raises(ValueError, match="label"):
        evaluate_rankings([["a"]], [{"a": label}])


def test_dcg_at_k_infinite_label_raises():
    with pytest.raises(ValueError, match="infinite"):
        dcg_at_k([math.inf], 1)


def test_dcg_at_k_three_dimensional_input_raises():
    with pytest.raises(ValueError, match="2-D"):
        dcg_at_k(np.zeros((2, 2, 2)), 1)


def test_dcg_at_k_unknown_gain_or_discount_raises():
    with pytest.raises(ValueError, match="gain"):
        dcg_at_k([1], 1, gain="cubic")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="discount"):
        dcg_at_k([1], 1, discount="log10")  # type: ignore[arg-type]
