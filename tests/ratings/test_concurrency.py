"""Concurrent saves through the real view stack and real PostgreSQL transactions (one connection per thread)."""

from __future__ import annotations

import threading

import psycopg.errors
import pytest
from django.db import OperationalError, connection
from django.test import Client
from django.urls import reverse

from corpus.models import Role
from corpus.services import collection_create
from ratings.models import Label, Rating, RatingHistory
from ratings.services import locks, record
from tests.ratings.conftest import HTMX, build_corpus

pytestmark = pytest.mark.django_db(transaction=True)

ROUNDS = 8


def post_together(jobs: list[tuple[object, str, dict]]) -> list[int]:
    """Post every (user, url, data) at the same moment, each from its own thread and connection."""
    barrier = threading.Barrier(len(jobs))
    statuses: list[int] = [0] * len(jobs)

    def run(i: int, user, url: str, data: dict) -> None:
        try:
            client = Client()
            client.force_login(user)
            barrier.wait()
            statuses[i] = client.post(url, data, **HTMX).status_code
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, *job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    return statuses


@pytest.fixture
def shared(make_user):
    collection = collection_create(name="Tiny", slug="tiny")
    corpus = build_corpus(collection)
    ann = make_user("ann", collection=collection, role=Role.RATER)
    ben = make_user("ben", collection=collection, role=Role.RATER)
    return corpus, ann, ben


def urls(corpus):
    return [
        reverse("rate-answer", args=["tiny", q.pk, a.pk])
        for q in corpus.q.values()
        for a in corpus.a.values()
    ][:ROUNDS]


def test_concurrent_two_raters_same_pair_both_kept_label_from_both(shared):
    corpus, ann, ben = shared
    for url in urls(corpus):
        assert post_together([(ann, url, {"stars": "1"}), (ben, url, {"stars": "3"})]) == [200, 200]

    assert Rating.objects.count() == ROUNDS * 2
    assert sorted(set(Rating.objects.values_list("rater__username", "stars"))) == [("ann", 1), ("ben", 3)]
    assert set(Label.objects.values_list("gain", "rater_count", "mean_stars", "disagreement")) == {
        (2, 2, 2.0, 2)
    }
    assert Label.objects.count() == ROUNDS


def test_concurrent_double_click_same_stars_one_rating_no_history(shared):
    corpus, ann, _ = shared
    for url in urls(corpus):
        assert post_together([(ann, url, {"stars": "2"}), (ann, url, {"stars": "2"})]) == [200, 200]

    assert Rating.objects.count() == ROUNDS
    assert RatingHistory.objects.count() == 0
    assert set(Label.objects.values_list("gain", "rater_count")) == {(2, 1)}


def test_concurrent_double_click_different_stars_one_rating_history_consistent(shared):
    corpus, ann, _ = shared
    for url in urls(corpus):
        assert post_together([(ann, url, {"stars": "0"}), (ann, url, {"stars": "3"})]) == [200, 200]

    assert Rating.objects.count() == ROUNDS
    # Whichever click came second won; its history row records the first, and the label follows the rating.
    for rating in Rating.objects.all():
        history = list(rating.history.values_list("previous_stars", "new_stars"))
        assert history == [(3 - rating.stars, rating.stars)]
        label = Label.objects.get(question=rating.question, answer=rating.answer)
        assert (label.gain, label.rater_count) == (rating.stars, 1)


def test_concurrent_many_raters_many_pairs_nothing_lost(shared, make_user):
    corpus, ann, ben = shared
    raters = [ann, ben] + [
        make_user(f"r{i}", collection=corpus.collection, role=Role.RATER) for i in range(4)
    ]
    url = urls(corpus)[0]

    assert post_together([(r, url, {"stars": str(i % 4)}) for i, r in enumerate(raters)]) == [200] * 6

    assert Rating.objects.count() == 6
    label = Label.objects.get()
    # Stars 0 1 2 3 0 1: median of (0 0 1 1 2 3) = (1 + 1) // 2 = 1.
    assert (label.gain, label.rater_count, label.mean_stars, label.disagreement) == (1, 6, 7 / 6, 3)


def test_concurrent_plain_forms_reversed_answer_orders_no_errors(shared):
    """The page without JavaScript saves all of a question's answers at once, in the page's (shuffled) order:
    two raters' forms listing the same answers in opposite orders must not deadlock each other."""
    corpus, ann, ben = shared
    question = corpus.q["q1"]
    answers = list(corpus.a.values())
    url = reverse("rate-question", args=["tiny", question.pk])
    statuses = []

    def form(order, stars: int) -> dict:
        return {f"stars-{a.pk}": str(stars) for a in order}

    def post_forms(jobs):
        barrier = threading.Barrier(len(jobs))
        results = [0] * len(jobs)

        def run(i, user, data):
            try:
                client = Client(raise_request_exception=False)
                client.force_login(user)
                barrier.wait()
                results[i] = client.post(url, data).status_code
            finally:
                connection.close()

        threads = [threading.Thread(target=run, args=(i, *job)) for i, job in enumerate(jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        return results

    for n in range(ROUNDS * 2):
        statuses += post_forms([(ann, form(answers, n % 4)), (ben, form(answers[::-1], 3 - n % 4))])

    assert statuses == [302] * ROUNDS * 4
    # Last round (n = 15): ann 3 stars, ben 0; the median of two is their mean rounded down, 1.
    assert set(Label.objects.values_list("gain", "rater_count", "mean_stars", "disagreement")) == {
        (1, 2, 1.5, 3)
    }
    assert Label.objects.count() == len(answers)


def test_plain_form_aborted_every_attempt_503_nothing_saved(shared, monkeypatch):
    corpus, ann, _ = shared
    question = corpus.q["q1"]

    def deadlocked(pairs):
        try:
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        except psycopg.errors.Error as exc:
            raise OperationalError(str(exc)) from exc

    monkeypatch.setattr(record, "_lock_pairs", deadlocked)
    monkeypatch.setattr(locks, "TRANSACTION_RETRY_BACKOFF_SECONDS", 0.0)
    client = Client()
    client.force_login(ann)

    response = client.post(
        reverse("rate-question", args=["tiny", question.pk]),
        {f"stars-{corpus.a['d1'].pk}": "2", f"stars-{corpus.a['d2'].pk}": "1"},
    )

    assert response.status_code == 503
    assert "nothing was saved. Send the form again." in response.content.decode()
    assert Rating.objects.count() == 0
