"""What a run selects, the agreement figures against hand-computed values, and the question page."""

from __future__ import annotations

import math

import pytest
from django.test import Client
from django.utils import timezone

from evaluation.models import EvaluationRun, QuestionResult, RunStatus
from judges.selectors import agreement, select_pairs
from judges.services import judge_create
from rankers.models import Ranker, RankerKind
from ratings.services import judge_rating_record

# The judge's stars on the eight pairs people rated (conftest.HUMAN: 3, 0, 3, 1, 3, 0, 2, 0).
JUDGE = {
    ("q1", "a1"): 3,
    ("q1", "a2"): 1,
    ("q2", "a2"): 2,
    ("q2", "a4"): 1,
    ("q3", "a3"): 3,
    ("q3", "a5"): 0,
    ("q4", "a6"): 2,
    ("q4", "a1"): 0,
}


def _run(collection, name: str, rankings: dict) -> EvaluationRun:
    ranker = Ranker.objects.create(collection=collection, name=name, kind=RankerKind.BUILTIN)
    now = timezone.now()
    run = EvaluationRun.objects.create(
        ranker=ranker,
        collection=collection,
        status=RunStatus.SUCCEEDED,
        ndcg_k=collection.ndcg_k,
        gain_scheme=collection.gain_scheme,
        discount=collection.discount,
        relevance_threshold=collection.relevance_threshold,
        accuracy_k=collection.accuracy_k,
        questions_total=len(rankings),
        questions_done=len(rankings),
        started_at=now,
        finished_at=now,
    )
    for question, ranked in rankings.items():
        QuestionResult.objects.create(
            run=run, question=question, ranked_answer_ids=ranked, labels=[None] * len(ranked)
        )
    return run


@pytest.fixture
def judge(judged):
    judge = judge_create(collection=judged.collection, name="Judy", kind="builtin")
    for (q, a), stars in JUDGE.items():
        judge_rating_record(
            account=judge.account,
            question=judged.q(q),
            answer=judged.a(a),
            stars=stars,
            reply=f"Grade: {stars}",
        )
    return judge


@pytest.fixture
def runs(judged):
    good = _run(judged.collection, "Good", {judged.q("q3"): ["a3", "a2", "a5"], judged.q("q4"): ["a6", "a1"]})
    bad = _run(judged.collection, "Bad", {judged.q("q3"): ["a5", "a3"], judged.q("q4"): ["a1", "a6"]})
    return good, bad


def test_agreement_figures_hand_computed(judge):
    figures = agreement(judge=judge)

    assert figures.pairs == 8
    assert figures.confusion == [[2, 1, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [0, 0, 1, 2]]
    # Disagreements (0→1) and (3→2) weigh 1/9 each: Σ w·O = 1/36; rows (3, 1, 1, 3)/8, columns 1/4 each:
    # Σ w·E = (1/4)(3·14 + 6 + 6 + 3·14)/8/9 = 1/3, so κ = 1 − (1/36)/(1/3) = 11/12.
    assert math.isclose(figures.kappa, 11 / 12)
    assert figures.leniency == 0.0 and figures.exact == 0.75
    assert figures.alpha is not None and 0.8 < figures.alpha < 1


def test_agreement_ndcg_and_kendall_tau_of_two_rankers(judge, runs):
    figures = agreement(judge=judge)

    good, bad = figures.systems
    # The judge agrees with people on every test pair, so each headline is the same with its labels.
    assert good.human == good.judge_same_pairs == 1.0
    assert bad.human == bad.judge_same_pairs < 1.0
    assert figures.tau == 1.0
    assert figures.as_json()["systems"][0]["ndcg_human"] == 1.0


def test_agreement_without_common_pairs_is_empty(judged):
    judge = judge_create(collection=judged.collection, name="New", kind="builtin")

    figures = agreement(judge=judge)

    assert (figures.pairs, figures.kappa, figures.alpha, figures.leniency) == (0, None, None, None)
    assert figures.confusion == [[0] * 4] * 4


def test_test_top_selects_the_unlabelled_answers_of_the_latest_run(judged, runs):
    judge = judge_create(collection=judged.collection, name="New", kind="builtin")

    pairs = select_pairs(judge=judge, selection="test-top", limit=100, question_ids=[])

    assert pairs == [(judged.q("q3").pk, judged.a("a2").pk)]


def test_queue_selection_follows_the_queue_and_skips_what_the_judge_rated(judged):
    judged.collection.target_raters = 2  # every labelled pair wants a second rater
    judged.collection.save(update_fields=["target_raters"])
    judge = judge_create(collection=judged.collection, name="New", kind="builtin")
    judge_rating_record(account=judge.account, question=judged.q("q1"), answer=judged.a("a1"), stars=3)

    pairs = select_pairs(judge=judge, selection="queue", limit=100, question_ids=[])

    # Every labelled pair has one rater of the two wanted; the judge's own pair is left out, and the
    # training questions' pairs come first, as the queue orders them.
    expected = {(judged.q(q).pk, judged.a(a).pk) for q, a in JUDGE} - {(judged.q("q1").pk, judged.a("a1").pk)}
    assert len(pairs) == len(expected) == 7 and set(pairs) == expected
    train = {judged.q("q1").pk, judged.q("q2").pk}
    assert {q for q, _ in pairs[:3]} <= train and {q for q, _ in pairs[3:]} & train == set()


def test_question_page_shows_the_judges_reply(judged, judge, runs):
    client = Client()
    client.force_login(judged.trainer)
    good, _ = runs

    response = client.get(f"/evaluation/runs/{good.pk}/questions/{judged.q('q3').pk}/")

    body = response.content.decode()
    assert response.status_code == 200
    assert 'data-testid="judge-replies"' in body
    assert "Judy: 3" in body and '<pre class="reply">Grade: 3</pre>' in body
    assert "(does not count)" in body


def test_agreement_lists_the_biggest_disagreements_first(judged, judge):
    figures = agreement(judge=judge)

    # (q1, a2): people 0, judge 1; (q2, a2): people 3, judge 2.
    assert [(q.external_id, a.external_id, h, j) for q, a, h, j in figures.disagreements] == [
        ("q1", "a2", 0, 1),
        ("q2", "a2", 3, 2),
    ]


def test_review_the_judge_comes_to_people_in_the_queue(judged, make_user):
    from corpus.models import Role
    from raters.next_task.picking import task_for_question
    from raters.next_task.task import PRIORITY_JUDGE_DISAGREEMENT

    judge = judge_create(collection=judged.collection, name="Far", kind="builtin")
    judge_rating_record(
        account=judge.account, question=judged.q("q4"), answer=judged.a("a1"), stars=3
    )  # people: 0
    reviewer = make_user("rev", collection=judged.collection, role=Role.RATER)

    task = task_for_question(collection=judged.collection, rater=reviewer, question=judged.q("q4"))

    assert task.priority == PRIORITY_JUDGE_DISAGREEMENT
    assert judged.a("a1").pk in task.answer_ids
    assert "a judge (a model) grades 1 answer 2 or more stars apart from people" in task.reason


def test_agreement_without_common_pairs_has_no_same_pairs_ndcg(judged, runs):
    judge = judge_create(collection=judged.collection, name="New", kind="builtin")

    figures = agreement(judge=judge)

    # Nothing rated by both: the "judge's grade on the same pairs" column is no measurement (not +0.000).
    assert [(s.human is not None, s.judge_same_pairs, s.difference) for s in figures.systems] == [
        (True, None, None),
        (True, None, None),
    ]
