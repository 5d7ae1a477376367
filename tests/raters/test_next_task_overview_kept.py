"""The home page's overview and the queue's next pairs, from the kept order (outside a transaction): equal
to a from-scratch read (every question assessed and sorted, every pair counted) after each change, and
read with as many queries at any number of labels."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Answer, Question, Split
from corpus.services import answers_upsert, collection_create, questions_upsert
from judges.services import judge_create
from raters.next_task.picking import Overview, queue_pairs_with_reasons, rater_overview
from raters.next_task.picking.assess import assess
from raters.next_task.picking.state import load
from ratings.services import judge_ratings_record, question_skip, rating_record, ratings_record

pytestmark = pytest.mark.django_db(transaction=True)

WORDS = ["wing", "lift", "drag", "shock", "heat", "plate", "layer", "flow", "nozzle", "stall", "cone", "jet"]


def _collection(slug: str):
    """12 questions and 24 answers sharing words, so term overlap pools 2–10 answers a question."""
    collection = collection_create(name=slug, slug=slug)
    collection.overlap_fraction = 0.0
    collection.save(update_fields=["overlap_fraction"])
    answers_upsert(
        collection=collection,
        records=[
            AnswerRecord(
                f"d{i}", WORDS[i % 12], f"{WORDS[i % 12]} {WORDS[(i * 5) % 12]} {WORDS[(i * 7) % 12]}"
            )
            for i in range(24)
        ],
    )
    questions_upsert(
        collection=collection,
        records=[
            QuestionRecord(
                f"q{i}", f"{WORDS[i]} {WORDS[(i + 3) % 12]}", Split.TEST if i % 3 == 0 else Split.TRAIN
            )
            for i in range(12)
        ],
    )
    return collection


def _from_scratch(collection, rater, limit: int) -> tuple[Overview, list[tuple[int, int, str]]]:
    """The overview and the next ``limit`` pairs as the queue defines them: every question assessed for
    the rater and sorted by (priority, sort key), every pair the queue knows counted."""
    state = load(collection, rater)
    ranked = []
    for q in state.questions:
        if q in state.skipped:
            continue
        priority, key, reason, to_show = assess(state, q)
        if priority is not None and to_show:
            ranked.append((priority, key, q, reason, to_show))
    ranked.sort(key=lambda item: (item[0], item[1]))
    pairs = {(q, a) for q, answers in state.candidates.items() for a in answers}
    pairs.update((q, a) for q, answers in state.labels.items() for a in answers)
    for q, result in state.run.items():
        pairs.update((q, a) for a in result.top)
    overview = Overview(
        pairs_total=len(pairs),
        pairs_rated=sum(len(answers) for answers in state.labels.values()),
        questions_waiting=len(ranked),
        my_ratings=sum(len(answers) for answers in state.mine.values()),
    )
    next_pairs = [(q, a, reason) for _, _, q, reason, to_show in ranked for a in to_show][:limit]
    return overview, next_pairs


def _check(collection, rater) -> Overview:
    """The kept reads, asserted equal to the from-scratch ones (5 pairs, and all of them)."""
    overview = rater_overview(collection=collection, rater=rater)
    expected_overview, expected_pairs = _from_scratch(collection, rater, 1000)
    assert overview == expected_overview
    for limit in (5, 1000):
        assert (
            queue_pairs_with_reasons(collection=collection, rater=rater, limit=limit)
            == expected_pairs[:limit]
        )
    return overview


def test_overview_and_next_pairs_kept_equal_a_from_scratch_read_after_each_change(make_user):
    c = _collection("kept-overview")
    ann, bob = make_user("ann"), make_user("bob")
    questions = list(Question.objects.filter(collection=c).order_by("external_id"))
    answers = list(Answer.objects.filter(collection=c).order_by("external_id"))
    first = _check(c, ann)
    assert (first.pairs_rated, first.my_ratings, first.questions_waiting) == (0, 0, 12)

    for rater, question, answer, stars in [
        (ann, questions[0], answers[0], 3),
        (ann, questions[0], answers[1], 0),  # disputed by bob below
        (bob, questions[0], answers[1], 3),
        (bob, questions[4], answers[2], 2),
        (ann, questions[7], answers[9], 1),
    ]:
        rating_record(rater=rater, question=question, answer=answer, stars=stars)
        _check(c, ann)
    question_skip(rater=ann, question=questions[3])
    _check(c, ann)

    # A judge's disputes and least certain grades move questions between priorities.
    judge = judge_create(collection=c, name="J", kind="builtin")
    judge_ratings_record(
        account=judge.account,
        judgments=[
            (questions[4].pk, answers[2].pk, 0, "", 0.9),
            (questions[5].pk, answers[3].pk, 1, "", 0.1),
        ],
    )
    _check(c, ann)
    rating_record(rater=bob, question=questions[5], answer=answers[3], stars=1)
    overview = _check(c, bob)
    assert overview.my_ratings == 3


def test_overview_queries_do_not_grow_with_labels(make_user):
    c = _collection("kept-overview-queries")
    ann, bob = make_user("ann"), make_user("bob")
    questions = list(Question.objects.filter(collection=c).order_by("external_id"))
    answers = list(Answer.objects.filter(collection=c).order_by("external_id"))

    def queries_after_a_rating(question, answer) -> int:
        rating_record(rater=ann, question=question, answer=answer, stars=2)
        with CaptureQueriesContext(connection) as queries:
            rater_overview(collection=c, rater=ann)
            queue_pairs_with_reasons(collection=c, rater=ann, limit=10)
        return len(queries)

    rater_overview(collection=c, rater=ann)
    few = queries_after_a_rating(questions[0], answers[0])
    # bob labels every pair: 288 labels.
    ratings_record(rater=bob, ratings=[(question, answer, 1) for question in questions for answer in answers])
    rater_overview(collection=c, rater=ann)
    many = queries_after_a_rating(questions[1], answers[1])
    # Two reads of the rater's state, each at most 10 statements (the table's header, the feed, the changed
    # questions' labels and the rater's ratings of them, the skips, ...), at 1 label as at 288: the second
    # read skips the labels when the feed's position has passed the rating, which another transaction
    # still open on the server (another test's, in a parallel run) can prevent, so each read may read the
    # changed question's labels again: the count is bounded rather than equal.
    assert few <= 20 and many <= 20
    assert rater_overview(collection=c, rater=ann).pairs_rated == 288
