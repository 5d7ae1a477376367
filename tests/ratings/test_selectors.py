import pytest

from corpus.models import Answer, Question, Role, Split
from ratings.selectors import (
    agreement_units,
    coverage_by_split,
    leniency_by_rater,
    multi_rated_ratings,
    rater_summaries,
    rating_target,
    ratings_per_day,
)
from ratings.services import question_skip, rating_record

pytestmark = pytest.mark.django_db


def test_leniency_by_rater_three_raters():
    # Pair A: r1=3, r2=1, r3=2. r1: 3 − 1.5 = +1.5; r2: 1 − 2.5 = −1.5; r3: 2 − 2 = 0.
    # Pair B: r1=2, r2=2.          r1: 0;            r2: 0.
    ratings = [
        (1, 10, 100, 3),
        (2, 10, 100, 1),
        (3, 10, 100, 2),
        (1, 10, 101, 2),
        (2, 10, 101, 2),
        (3, 10, 102, 0),
    ]

    assert leniency_by_rater(ratings=ratings) == {1: (0.75, 2), 2: (-0.75, 2), 3: (0.0, 1)}


def test_agreement_units_only_pairs_with_two_or_more():
    ratings = [(1, 10, 100, 3), (2, 10, 100, 1), (3, 10, 102, 0)]

    assert agreement_units(ratings=ratings) == [[3, 1]]


def test_multi_rated_ratings_only_shared_pairs(corpus, rater, trainer):
    a, q = corpus.a, corpus.q
    rating_record(rater=rater, question=q["q1"], answer=a["d1"], stars=3)
    rating_record(rater=trainer, question=q["q1"], answer=a["d1"], stars=1)
    rating_record(rater=rater, question=q["q1"], answer=a["d2"], stars=1)

    rows = multi_rated_ratings(collection=corpus.collection)

    assert sorted(rows) == sorted(
        [(rater.pk, q["q1"].pk, a["d1"].pk, 3), (trainer.pk, q["q1"].pk, a["d1"].pk, 1)]
    )


def test_rater_summaries_include_raters_who_only_skipped(corpus, rater, make_user):
    skipper = make_user("sid", collection=corpus.collection, role=Role.RATER)
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=3)
    question_skip(rater=skipper, question=corpus.q["q1"])

    summaries = rater_summaries(collection=corpus.collection, ratings=[])

    assert [(s.username, s.ratings, s.skips, s.leniency) for s in summaries] == [
        ("rita", 1, 0, None),
        ("sid", 0, 1, None),
    ]


def test_ratings_per_day_counts_new_ratings_and_raters(corpus, rater, trainer):
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=3)
    rating_record(rater=rater, question=corpus.q["q1"], answer=corpus.a["d1"], stars=1)
    rating_record(rater=trainer, question=corpus.q["q1"], answer=corpus.a["d2"], stars=1)

    days = ratings_per_day(collection=corpus.collection)

    assert [(d.ratings, d.raters) for d in days] == [(2, 2)]


def test_coverage_by_split_counts_top_pairs(corpus, rater):
    a, q = corpus.a, corpus.q
    rating_record(rater=rater, question=q["q1"], answer=a["d6"], stars=0)
    candidates = {q["q1"].pk: [a["d1"].pk, a["d2"].pk], q["q2"].pk: [a["d3"].pk], q["q3"].pk: []}

    train, test = coverage_by_split(collection=corpus.collection, candidates=candidates)

    assert (
        train.questions,
        train.questions_labelled,
        train.candidate_pairs,
        train.candidate_pairs_labelled,
    ) == (2, 1, 2, 0)
    assert (test.questions, test.questions_labelled, test.candidate_pairs, test.pairs_percent) == (1, 0, 1, 0)


def test_rating_target_reads_answer_collection_question_check_and_role(corpus, rater):
    q, a = corpus.q["q1"], corpus.a["d1"]

    target = rating_target(slug="tiny", question_id=q.pk, answer_id=a.pk, user_id=rater.pk)

    assert (target.collection.pk, target.collection.slug, target.collection.name) == (
        corpus.collection.pk,
        "tiny",
        "Tiny",
    )
    assert (target.answer.pk, target.answer.collection_id, target.answer.title, target.answer.body) == (
        a.pk,
        corpus.collection.pk,
        a.title,
        a.body,
    )
    assert (target.question.pk, target.question.collection_id) == (q.pk, corpus.collection.pk)
    assert target.answer.collection is target.collection and target.question.collection is target.collection
    assert (target.question_here, target.member_role) == (True, "rater")


def test_rating_target_outsider_has_no_role(corpus, outsider):
    q, a = corpus.q["q1"], corpus.a["d1"]

    target = rating_target(slug="tiny", question_id=q.pk, answer_id=a.pk, user_id=outsider.pk)

    assert (target.question_here, target.member_role) == (True, None)


def test_rating_target_question_of_another_collection_not_here(corpus, rater, other_collection):
    foreign = Question.objects.create(
        collection=other_collection, external_id="f", text="f", split=Split.TRAIN
    )

    target = rating_target(slug="tiny", question_id=foreign.pk, answer_id=corpus.a["d1"].pk, user_id=rater.pk)

    assert target.question_here is False


def test_rating_target_answer_not_in_the_slugs_collection_is_none(corpus, rater, other_collection):
    foreign = Answer.objects.create(collection=other_collection, external_id="x", title="x", body="x")

    assert (
        rating_target(slug="tiny", question_id=corpus.q["q1"].pk, answer_id=foreign.pk, user_id=rater.pk)
        is None
    )
    assert (
        rating_target(
            slug="nope", question_id=corpus.q["q1"].pk, answer_id=corpus.a["d1"].pk, user_id=rater.pk
        )
        is None
    )
