"""Review the judge, its other half: the judge's least certain judgments go to people and to its page."""

from __future__ import annotations

from django.test import Client

from corpus.models import Role
from judges.selectors import agreement, least_certain
from judges.services import judge_create
from raters.next_task.judge_reads import judge_uncertain_pairs
from raters.next_task.picking import task_for_question
from raters.next_task.task import PRIORITY_JUDGE_UNCERTAIN
from ratings.services import judge_ratings_record, rating_record


def _judge_with_certainties(judged, name: str, certainties: dict[tuple[str, str], float | None]):
    judge = judge_create(collection=judged.collection, name=name, kind="builtin")
    judge_ratings_record(
        account=judge.account,
        judgments=[(judged.q(q).pk, judged.a(a).pk, 2, "", c) for (q, a), c in certainties.items()],
    )
    return judge


CERTAINTIES = {
    ("q1", "a1"): 0.05,  # people rated it: not offered to people, still shown on the judge's page
    ("q2", "a1"): 0.1,
    ("q4", "a3"): 0.2,
    ("q1", "a4"): 0.5,
    ("q2", "a3"): None,  # no certainty: never chosen
}


def test_least_certain_unrated_pairs_of_each_judge_smallest_first(judged):
    _judge_with_certainties(judged, "Unsure", CERTAINTIES)
    other = judge_create(collection=judged.collection, name="Other", kind="builtin")
    judge_ratings_record(
        account=other.account, judgments=[(judged.q("q3").pk, judged.a("a1").pk, 1, "", 0.9)]
    )

    pairs = judge_uncertain_pairs(collection=judged.collection, per_judge=2)

    # Unsure's two least certain unrated pairs, and Other's only one (0.9 is its least certain).
    assert pairs == {
        judged.q("q2").pk: [judged.a("a1").pk],
        judged.q("q4").pk: [judged.a("a3").pk],
        judged.q("q3").pk: [judged.a("a1").pk],
    }


def test_review_the_judge_offers_its_least_certain_pair_with_a_plain_reason(judged, make_user):
    _judge_with_certainties(judged, "Unsure", CERTAINTIES)
    reviewer = make_user("unsure-rev", collection=judged.collection, role=Role.RATER)

    task = task_for_question(collection=judged.collection, rater=reviewer, question=judged.q("q4"))

    assert task.priority == PRIORITY_JUDGE_UNCERTAIN
    assert judged.a("a3").pk in task.answer_ids
    assert task.reason == (
        "Chosen because a judge (a model) was least sure of its grade for 1 answer here and no person has "
        "rated it; your rating shows whether the judge was right."
    )


def test_a_pair_people_rated_is_no_longer_offered_as_uncertain(judged, make_user):
    _judge_with_certainties(judged, "Unsure", CERTAINTIES)
    reviewer = make_user("unsure-rev2", collection=judged.collection, role=Role.RATER)
    rating_record(rater=reviewer, question=judged.q("q4"), answer=judged.a("a3"), stars=1)

    pairs = judge_uncertain_pairs(collection=judged.collection)

    assert judged.q("q4").pk not in pairs
    other = make_user("unsure-rev3", collection=judged.collection, role=Role.RATER)
    task = task_for_question(collection=judged.collection, rater=other, question=judged.q("q4"))
    assert task.priority != PRIORITY_JUDGE_UNCERTAIN


def test_least_certain_lists_certainty_and_peoples_grade(judged):
    judge = _judge_with_certainties(judged, "Unsure", CERTAINTIES)

    rows = least_certain(judge=judge, limit=3)

    # conftest.HUMAN: people gave (q1, a1) 3 stars; nobody rated the others.
    assert [(u.question.external_id, u.answer.external_id, u.stars, u.certainty, u.people) for u in rows] == [
        ("q1", "a1", 2, 0.05, 3),
        ("q2", "a1", 2, 0.1, None),
        ("q4", "a3", 2, 0.2, None),
    ]
    assert len(agreement(judge=judge).least_certain) == 4


def test_agreement_page_shows_the_least_certain_grades(judged):
    judge = _judge_with_certainties(judged, "Unsure", CERTAINTIES)
    client = Client()
    client.force_login(judged.trainer)

    body = client.get(f"/c/judged/judges/{judge.pk}/agreement/").content.decode()

    assert 'data-testid="least-certain"' in body
    assert "<td>0.050</td>" in body and "<td>0.500</td>" in body
    assert "distance of the pair&#x27;s score from the nearest grade threshold" in body
    assert body.count("not rated yet") == 3
