"""Queue modes: "decide" rates the pair that decides the comparison (or the headline), "unsure" the
training pairs the ranker is least sure of; never a pair the rater rated."""

from __future__ import annotations

import pytest

from raters.next_task.modes import mode_pairs, next_mode_task
from ratings.services import question_skip, rating_record
from tests.evaluation.decide_scenario import two_versions

pytestmark = pytest.mark.django_db


@pytest.fixture
def versions(corpus, collection, make_user):
    """See tests.evaluation.decide_scenario: d6 decides, then d5."""
    scenario = two_versions(collection, make_user, corpus)
    return scenario.ranker, scenario.v3, scenario.v4


def test_mode_pairs_decide_puts_the_deciding_pair_first(corpus, versions, rater):
    pairs = mode_pairs(collection=corpus.collection, rater=rater, mode="decide")

    a, q2 = corpus.a, corpus.q["q2"]
    assert [(p.question_id, p.answer_id) for p in pairs] == [(q2.pk, a["d6"].pk), (q2.pk, a["d5"].pk)]
    assert pairs[0].value > pairs[1].value > 0
    assert pairs[0].reason == (
        "Chosen because this answer decides whether version v4 is better than version v3: its rating "
        "settles that comparison faster than any others."
    )


def test_mode_pairs_decide_never_offers_a_pair_the_rater_rated(corpus, versions, rater):
    rating_record(rater=rater, question=corpus.q["q2"], answer=corpus.a["d6"], stars=0)

    pairs = mode_pairs(collection=corpus.collection, rater=rater, mode="decide")

    assert [p.answer_id for p in pairs] == [corpus.a["d5"].pk]


def test_mode_pairs_decide_skipped_question_offers_nothing(corpus, versions, rater):
    question_skip(rater=rater, question=corpus.q["q2"], reason="")

    assert mode_pairs(collection=corpus.collection, rater=rater, mode="decide") == []


def test_mode_pairs_decide_headline_without_challenger(corpus, versions, rater):
    _, v3, _ = versions

    pairs = mode_pairs(
        collection=corpus.collection, rater=rater, mode="decide", champion_id=v3.pk, challenger_id=v3.pk
    )

    # Only the champion's unrated answer can move its headline.
    assert [p.answer_id for p in pairs] == [corpus.a["d5"].pk]
    assert "how sure we are of the ranker's overall score (NDCG@10," in pairs[0].reason


def test_next_mode_task_shows_the_deciding_answers_of_the_question(corpus, versions, rater):
    task = next_mode_task(collection=corpus.collection, rater=rater, mode="decide")

    assert task is not None
    assert task.question_id == corpus.q["q2"].pk
    assert sorted(task.answer_ids) == sorted([corpus.a["d6"].pk, corpus.a["d5"].pk])
    assert task.reason.startswith("Chosen because these answers decide whether version v4 is better")


def test_mode_pairs_unsure_keeps_to_unrated_training_pairs(corpus, rater):
    # Term overlap: q1 -> [d1, d2], q3 -> [d5, d2] (training); q2 is a test question.
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=3)

    pairs = mode_pairs(collection=corpus.collection, rater=rater, mode="unsure")

    a, q = corpus.a, corpus.q
    assert sorted((p.question_id, p.answer_id) for p in pairs) == sorted(
        [(q["q1"].pk, a["d2"].pk), (q["q3"].pk, a["d5"].pk), (q["q3"].pk, a["d2"].pk)]
    )
    assert all("least sure" in p.reason for p in pairs)


def test_mode_pairs_rejects_an_unknown_mode(corpus, rater):
    with pytest.raises(ValueError, match="mode must be one of"):
        mode_pairs(collection=corpus.collection, rater=rater, mode="fastest")
