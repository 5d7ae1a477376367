"""evaluation.selectors.change_explained: a change of NDCG split into a label effect and a ranker effect.

The case (conftest ``change_case``), with L = log2(3), linear gains, discount log2(rank + 1), k = 10:

* run A (v1), labels t1 {x1: 3}, t2 {x3: 2}; ranked t1 [x2, x1] -> (3/L) / 3 = 1/L,
  t2 [x4, x3] -> (2/L) / 2 = 1/L; A = 1/L = 0.631.
* then x4 is rated 1 for t2. A's t2 ranking with today's labels: (1 + 2/L) / (2 + 1/L) = 0.860.
  label effect = (1/L + 0.860) / 2 - 1/L = 0.114.
* run B (v2) ranked t1 [x1, x2] -> 1, t2 [x3, x4] -> (2 + 1/L) / (2 + 1/L) = 1; B = 1.
  ranker effect = ((1 - 1/L) + (1 - 0.860)) / 2 = 0.255;  0.114 + 0.255 = 0.369 = B - A.
* the rankings compared as every comparison is, on rated answers (today's labels): A's t1 [x2, x1]
  condenses to [x1] -> 1, its t2 [x4, x3] is all rated -> 0.860; B scores 1 on both, so the rated
  difference is (0 + (1 - 0.860)) / 2 = 0.070, and its test is on [1, 1] vs [1, 0.860].
"""

import math

import pytest

from evaluation.metrics.stats import compare_runs
from evaluation.models import RunStatus
from evaluation.selectors import change_explained, p_text, signed
from tests.evaluation.conftest import http_ranker, rate
from tests.evaluation.helpers import evaluate_inline

pytestmark = pytest.mark.django_db

L = math.log2(3)
A_T1 = 1 / L
A_T2 = 1 / L
A_T2_TODAY = (1 + 2 / L) / (2 + 1 / L)
A = (A_T1 + A_T2) / 2
A_TODAY = (A_T1 + A_T2_TODAY) / 2
LABEL_EFFECT = A_TODAY - A
RANKER_EFFECT = ((1 - A_T1) + (1 - A_T2_TODAY)) / 2
RATED_DIFFERENCE = (1 - A_T2_TODAY) / 2


def test_change_explained_hand_computed_values_match(change_case):
    run_a, run_b = change_case.run_a, change_case.run_b
    assert (run_a.status, run_b.status) == (RunStatus.SUCCEEDED, RunStatus.SUCCEEDED)
    assert run_a.ndcg_mean == pytest.approx(A, abs=1e-12)
    assert run_b.ndcg_mean == pytest.approx(1.0, abs=1e-12)
    change = change_explained(run_a=run_a, run_b=run_b)
    assert change.a_today == pytest.approx(A_TODAY, abs=1e-12)
    assert change.b_today == pytest.approx(1.0, abs=1e-12)
    assert change.label_effect == pytest.approx(LABEL_EFFECT, abs=1e-12)
    assert change.label_effect == pytest.approx(0.11439447314, abs=1e-10)
    assert change.ranker_effect == pytest.approx(RANKER_EFFECT, abs=1e-12)
    assert change.ranker_effect == pytest.approx(0.25467577329, abs=1e-10)
    assert change.paired == 2
    assert change.only_one_run == 0
    assert not change.labels_since_b
    assert not change.definition_changed


def test_change_explained_split_adds_up_when_b_used_todays_labels(change_case):
    change = change_explained(run_a=change_case.run_a, run_b=change_case.run_b)
    total = change_case.run_b.ndcg_mean - change_case.run_a.ndcg_mean
    assert change.label_effect + change.ranker_effect == pytest.approx(total, abs=1e-12)
    assert total == pytest.approx(1 - 1 / L, abs=1e-12)
    assert change.other == pytest.approx(0.0, abs=1e-12)
    assert change.other_text == ""


def test_change_explained_ranker_effect_uses_paired_randomization_test(change_case):
    change = change_explained(run_a=change_case.run_a, run_b=change_case.run_b)
    expected = compare_runs([1.0, 1.0], [1.0, A_T2_TODAY], seed=0)
    assert change.rated_difference == pytest.approx(RATED_DIFFERENCE, abs=1e-12)
    assert change.rated_difference == pytest.approx(0.07014, abs=1e-5)
    assert change.p_value == pytest.approx(expected.p_value)
    assert (change.ci_low, change.ci_high) == (
        pytest.approx(expected.ci_low),
        pytest.approx(expected.ci_high),
    )
    # Two questions: the sign-flip test cannot call anything real.
    assert change.verdict == "within noise"


def test_change_explained_texts_use_one_format(change_case):
    change = change_explained(run_a=change_case.run_a, run_b=change_case.run_b)
    expected = compare_runs([1.0, 1.0], [1.0, A_T2_TODAY], seed=0)
    p = f"{expected.p_value:.3f}"
    assert change.total_text == "+0.369"
    assert (change.ndcg_a_text, change.ndcg_b_text) == ("0.631", "1.000")
    assert (change.a_today_text, change.b_today_text) == ("0.745", "1.000")
    assert change.label_text == "+0.114: new ratings changed what we know (ranker unchanged)"
    assert change.ranker_text == (
        f"+0.255: version v1 → version v2; NDCG@10 on rated answers +0.070 (within noise, p = {p})"
    )
    assert change.ci_text == f"{signed(expected.ci_low)} to {signed(expected.ci_high)}"
    assert change.ci_text == "+0.000 to +0.140"


def test_change_explained_same_version_says_so(change_case):
    # Evaluate v2 again with no new rating: nothing changed at all.
    run_c = evaluate_inline(change_case.ranker)
    change = change_explained(run_a=change_case.run_b, run_b=run_c)
    assert change.label_text == "+0.000: new ratings changed what we know (ranker unchanged)"
    assert change.ranker_text == (
        "+0.000: same ranker version; NDCG@10 on rated answers +0.000 (within noise, p = 1.000)"
    )
    assert change.total_text == "+0.000"
    assert change.ci_text == ""


def test_change_explained_rating_after_b_is_the_other_part(change_case):
    before = change_explained(run_a=change_case.run_a, run_b=change_case.run_b)
    assert before.other == pytest.approx(0.0, abs=1e-12)
    # x3 becomes perfect for t1 after B ran: t1's ideal DCG is now 3 + 3/L for both rankings.
    rate(change_case.collection, "t1", "x3", 3)
    change = change_explained(run_a=change_case.run_a, run_b=change_case.run_b)
    a_t1, b_t1 = 1 / (L + 1), L / (L + 1)
    assert change.a_today == pytest.approx((a_t1 + A_T2_TODAY) / 2, abs=1e-12)
    assert change.b_today == pytest.approx((b_t1 + 1) / 2, abs=1e-12)
    assert change.label_effect == pytest.approx((a_t1 + A_T2_TODAY) / 2 - A, abs=1e-12)
    assert change.ranker_effect == pytest.approx(((b_t1 - a_t1) + (1 - A_T2_TODAY)) / 2, abs=1e-12)
    # B's own score (1.0) is higher than its rankings score today: the rest of the change.
    assert change.other == pytest.approx(1 / (2 * (L + 1)), abs=1e-12)
    assert change.labels_since_b
    assert change.other_text == f"{signed(1 / (2 * (L + 1)))}: ratings made after the newer run"
    assert change.other_text == "+0.193: ratings made after the newer run"
    assert change.label_effect + change.ranker_effect + change.other == pytest.approx(1 - 1 / L, abs=1e-12)


def test_change_explained_question_missing_from_b_is_left_out_of_ranker_effect(change_case, fast_retries):
    change_case.server.fail = {"t2"}
    # One of two questions failing is more than 5%: the run fails, but its t1 result is stored.
    run_c = evaluate_inline(change_case.ranker)
    assert run_c.status == RunStatus.FAILED
    change = change_explained(run_a=change_case.run_a, run_b=run_c)
    assert change.paired == 1
    assert change.only_one_run == 1
    assert change.ranker_effect == pytest.approx(1 - A_T1, abs=1e-12)
    assert change.ndcg_b is None and change.total_text == "–"
    assert [(d.external_id, d.delta_text) for d in change.questions] == [("t1", "+0.369"), ("t2", "–")]


def test_change_explained_two_rankers_names_both(change_case):
    other = http_ranker(change_case.collection, change_case.server.url, name="Other")
    run_c = evaluate_inline(other)
    change = change_explained(run_a=change_case.run_a, run_b=run_c)
    assert change.versions_text == "Service (version v1) → Other (no version)"
    # Other ranks as v2 did (the same server): the same ranker effect as B's.
    assert change.ranker_effect == pytest.approx(RANKER_EFFECT, abs=1e-12)


def test_change_explained_cached_until_a_label_changes(change_case, django_assert_num_queries):
    run_a, run_b = change_case.run_a, change_case.run_b
    with django_assert_num_queries(3):  # labels' state, then both runs' rankings and today's labels
        first = change_explained(run_a=run_a, run_b=run_b)
    with django_assert_num_queries(1):  # labels' state: unchanged, so the figures come from the cache
        again = change_explained(run_a=run_a, run_b=run_b)
    assert again == first
    # Re-rating x4 for t2 from 1 to 2 stars changes a label: A's t2 ranking [x4, x3] is ideal now.
    rate(change_case.collection, "t2", "x4", 2)
    with django_assert_num_queries(3):
        after = change_explained(run_a=run_a, run_b=run_b)
    assert after.a_today == pytest.approx((A_T1 + 1) / 2, abs=1e-12)


def test_change_explained_metric_change_is_flagged_and_uses_newer_definition(change_case):
    collection = change_case.collection
    collection.ndcg_k = 1
    collection.save()
    run_c = evaluate_inline(change_case.ranker)  # v2 again, scored at k = 1
    change = change_explained(run_a=change_case.run_a, run_b=run_c)
    assert change.definition_changed
    # A's rankings at k = 1 with today's labels: t1 [x2, x1] -> 0 / 3 = 0; t2 [x4, x3] -> 1 / 2.
    assert change.a_today == pytest.approx(0.25, abs=1e-12)
    assert change.label_effect == pytest.approx(0.25 - A, abs=1e-12)
    # v2 at k = 1: t1 [x1, x2] -> 3 / 3; t2 [x3, x4] -> 2 / 2.
    assert change.ranker_effect == pytest.approx(0.75, abs=1e-12)
    assert change.label_text == "−0.381: new ratings changed what we know (ranker unchanged)"


def test_p_text_small_and_undefined_values():
    assert p_text(0.0001) == "p < 0.001"
    assert p_text(0.01) == "p = 0.010"
    assert p_text(None) == "p = –"
    assert signed(-0.0001) == "+0.000"
    assert signed(-0.0236) == "−0.024"
