"""Comparing N runs: the per-question matrix, each pair's winners and losers, Holm-corrected p-values."""

import math

import pytest

from evaluation.models import RunStatus
from evaluation.selectors import runs_compare
from tests.evaluation.conftest import http_ranker
from tests.evaluation.helpers import evaluate_inline

pytestmark = pytest.mark.django_db

LOG3 = math.log2(3)
# The small collection's labels: q1 a1=3 a5=2 a3=1; q2 a2=3 a7=2 a8=0; q3 a3=3 a1=0; q4 a4=3 a8=2; q5 a6=3;
# q6 has no good answer. Linear gain, discount log2(rank + 1).
Q1_R2 = (1 + 3 / LOG3) / (3 + 2 / LOG3 + 1 / 2)  # a3, a1 against the ideal a1, a5, a3: 0.60749
Q3_R1 = (3 / LOG3) / 3  # a1 (0 stars), a3: 0.63093
Q4_R1 = (2 + 3 / LOG3) / (3 + 2 / LOG3)  # a8, a4 against a4, a8: 0.91340

RUNS = [
    {
        "q1": ["a1", "a5", "a3"],
        "q2": ["a2", "a7"],
        "q3": ["a1", "a3"],
        "q4": ["a8", "a4"],
        "q5": ["a6"],
        "q6": ["a4"],
    },
    {"q1": ["a3", "a1"], "q2": ["a2", "a7"], "q3": ["a3"], "q4": ["a4", "a8"], "q5": ["a6"], "q6": ["a4"]},
    {"q1": ["a1", "a5", "a3"], "q2": ["a8"], "q3": ["a3"], "q4": ["a4", "a8"], "q5": ["a1"], "q6": []},
]


@pytest.fixture
def three_runs(small, fake_ranker_server):
    server = fake_ranker_server(rankings=RUNS[0])
    ranker = http_ranker(small, server.url)
    runs = []
    for rankings in RUNS:
        server.rankings = rankings
        run = evaluate_inline(ranker)
        assert run.status == RunStatus.SUCCEEDED
        runs.append(run)
    return runs


def test_runs_compare_matrix_is_each_runs_ndcg_per_question(three_runs):
    comparison = runs_compare(runs=list(reversed(three_runs)))

    assert [r.pk for r in comparison.runs] == [r.pk for r in three_runs]  # oldest first
    matrix = {row.external_id: row.ndcg for row in comparison.questions}
    assert matrix["q1"] == pytest.approx([1.0, Q1_R2, 1.0])
    assert matrix["q2"] == pytest.approx([1.0, 1.0, 0.0])
    assert matrix["q3"] == pytest.approx([Q3_R1, 1.0, 1.0])
    assert matrix["q4"] == pytest.approx([Q4_R1, 1.0, 1.0])
    assert matrix["q5"] == pytest.approx([1.0, 1.0, 0.0])
    assert matrix["q6"] == [None, None, None]
    # Biggest spread first: q2 and q5 (1.0), then q1, q3, q4; q6 (no value) last.
    assert [row.external_id for row in comparison.questions] == ["q2", "q5", "q1", "q3", "q4", "q6"]
    assert comparison.means == pytest.approx([(3 + Q3_R1 + Q4_R1) / 5, (4 + Q1_R2) / 5, 3 / 5])
    assert comparison.k == 10


def test_runs_compare_pairs_count_winners_losers_and_difference(three_runs):
    comparison = runs_compare(runs=three_runs)

    pairs = {(p.a, p.b): p for p in comparison.pairs}
    assert list(pairs) == [(0, 1), (0, 2), (1, 2)]
    assert [(p.winners, p.losers, p.ties, p.n) for p in comparison.pairs] == [
        (2, 1, 2, 5),
        (2, 2, 1, 5),
        (1, 2, 2, 5),
    ]
    assert pairs[(0, 1)].difference == pytest.approx(((Q1_R2 - 1) + (1 - Q3_R1) + (1 - Q4_R1)) / 5)
    assert pairs[(0, 2)].difference == pytest.approx((-1 + (1 - Q3_R1) + (1 - Q4_R1) - 1) / 5)
    assert pairs[(1, 2)].difference == pytest.approx(((1 - Q1_R2) - 1 - 1) / 5)
    assert pairs[(0, 1)].biggest_winners == [
        ("heat transfer hypersonic", pytest.approx(1 - Q3_R1)),
        ("flutter of wings", pytest.approx(1 - Q4_R1)),
    ]
    assert pairs[(0, 1)].biggest_losers == [("boundary layer flat plate", pytest.approx(Q1_R2 - 1))]


def test_runs_compare_holm_multiplies_sorted_p_values(three_runs):
    comparison = runs_compare(runs=three_runs)

    raw = [p.p_value for p in comparison.pairs]
    order = sorted(range(3), key=lambda i: raw[i])
    expected = [0.0] * 3
    running = 0.0
    for step, i in enumerate(order):  # smallest × 3, next × 2, largest × 1, never decreasing, at most 1
        running = max(running, (3 - step) * raw[i])
        expected[i] = min(1.0, running)
    assert [p.p_holm for p in comparison.pairs] == pytest.approx(expected)
    for pair in comparison.pairs:
        assert pair.p_holm >= pair.p_value
        if pair.p_holm >= 0.05:
            assert pair.verdict == "within noise"
        else:
            assert pair.verdict == ("real improvement" if pair.difference > 0 else "real drop")
    # Five questions: no pair can be significant once corrected.
    assert {p.verdict for p in comparison.pairs} == {"within noise"}


@pytest.mark.parametrize("count", [1, 7])
def test_runs_compare_refuses_too_few_or_too_many(three_runs, count):
    runs = (three_runs * 3)[:count]
    with pytest.raises(ValueError):
        runs_compare(runs=runs)


def test_runs_compare_refuses_repeated_run(three_runs):
    with pytest.raises(ValueError, match="once"):
        runs_compare(runs=[three_runs[0], three_runs[0]])


def test_runs_compare_of_finished_runs_is_cached_until_a_label_changes(three_runs, django_assert_num_queries):
    from corpus.models import Answer, Question
    from ratings.services import rating_record
    from trainer.services import import_rater

    first = runs_compare(runs=three_runs)
    with django_assert_num_queries(1):  # the labels' state only
        again = runs_compare(runs=three_runs)
    assert again.pairs == first.pairs and again.questions == first.questions

    rating_record(
        rater=import_rater(),
        question=Question.objects.get(external_id="q5"),
        answer=Answer.objects.get(external_id="a1"),
        stars=3,
    )

    changed = runs_compare(runs=three_runs)
    # q5 now knows two perfect answers (a6, a1): run 3's [a1] scores 3 / (3 + 3 / log2(3)).
    assert {row.external_id: row.ndcg for row in changed.questions}["q5"][2] == pytest.approx(
        3 / (3 + 3 / LOG3)
    )
