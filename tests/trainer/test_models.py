"""Constraints live in the database, not only in forms."""

import pytest
from django.db import IntegrityError, transaction

from corpus.models import Answer, Question
from rankers.models import Ranker
from ratings.models import Label, Rating


@pytest.fixture
def pair(collection):
    question = Question.objects.create(
        collection=collection, external_id="q1", text="what lifts", split="train"
    )
    answer = Answer.objects.create(collection=collection, external_id="a1", title="Lift")
    return question, answer


def test_answer_external_id_unique_per_collection(collection, other_collection):
    Answer.objects.create(collection=collection, external_id="a1")
    Answer.objects.create(collection=other_collection, external_id="a1")
    with pytest.raises(IntegrityError), transaction.atomic():
        Answer.objects.create(collection=collection, external_id="a1")


def test_question_split_check_constraint(collection):
    with pytest.raises(IntegrityError), transaction.atomic():
        Question.objects.create(collection=collection, external_id="q", text="x", split="dev")


@pytest.mark.parametrize("stars", [-1, 4, 10])
def test_rating_stars_check_constraint(pair, rater, stars):
    question, answer = pair
    with pytest.raises(IntegrityError), transaction.atomic():
        Rating.objects.create(rater=rater, question=question, answer=answer, stars=stars)


def test_rating_one_per_rater_pair(pair, rater):
    question, answer = pair
    Rating.objects.create(rater=rater, question=question, answer=answer, stars=1)
    with pytest.raises(IntegrityError), transaction.atomic():
        Rating.objects.create(rater=rater, question=question, answer=answer, stars=2)


def test_label_gain_check_constraint(pair):
    question, answer = pair
    with pytest.raises(IntegrityError), transaction.atomic():
        Label.objects.create(question=question, answer=answer, gain=4, rater_count=1, mean_stars=4)


def test_ranker_one_default_per_collection(collection):
    Ranker.objects.create(collection=collection, name="a", kind="builtin", is_default=True)
    Ranker.objects.create(collection=collection, name="b", kind="builtin", is_default=False)
    with pytest.raises(IntegrityError), transaction.atomic():
        Ranker.objects.create(collection=collection, name="c", kind="http", is_default=True)
