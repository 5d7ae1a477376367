"""POST /api/collections/{slug}/ratings/ from two threads at once (real connections, real transactions).

Two raters post lists of the same pairs in opposite orders: every request succeeds (no deadlock, no 500)
and the labels are exactly the median of what both said last.
"""

from __future__ import annotations

import threading

import psycopg.errors
import pytest
from django.db import OperationalError, connection
from rest_framework.test import APIClient

from corpus.formats.records import AnswerRecord, QuestionRecord
from corpus.models import Role, Split
from corpus.services import answers_upsert, collection_create, questions_upsert
from ratings.models import Label, Rating
from ratings.services import locks, record
from tests.trainer.api_support import lifted_throttle  # noqa: F401 - autouse fixture
from trainer.services import api_token_create

pytestmark = pytest.mark.django_db(transaction=True)

URL = "/api/collections/busy/ratings/"
ROUNDS = 25
QUESTIONS = ["q1", "q2", "q3"]
ANSWERS = ["a1", "a2", "a3", "a4"]
PAIRS = [(q, a) for q in QUESTIONS for a in ANSWERS]


@pytest.fixture
def keys(make_user) -> list[str]:
    collection = collection_create(name="Busy", slug="busy")
    answers_upsert(collection=collection, records=[AnswerRecord(a, a, f"answer {a}") for a in ANSWERS])
    questions_upsert(
        collection=collection, records=[QuestionRecord(q, f"question {q}", Split.TRAIN) for q in QUESTIONS]
    )
    ann = make_user("ann", collection=collection, role=Role.RATER)
    ben = make_user("ben", collection=collection, role=Role.RATER)
    return [api_token_create(collection=collection, user=u, role=Role.RATER)[1] for u in (ann, ben)]


def body(pairs: list[tuple[str, str]], stars: int) -> list[dict]:
    return [{"question_id": q, "answer_id": a, "stars": stars} for q, a in pairs]


def post_together(jobs: list[tuple[str, list[dict]]]) -> list[tuple[int, bytes]]:
    """Post every (key, body) at the same moment, each from its own thread and database connection."""
    barrier = threading.Barrier(len(jobs))
    results: list[tuple[int, bytes]] = [(0, b"")] * len(jobs)

    def run(i: int, key: str, data: list[dict]) -> None:
        try:
            client = APIClient()
            client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
            barrier.wait()
            response = client.post(URL, data, format="json")
            results[i] = (response.status_code, response.content)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(i, *job)) for i, job in enumerate(jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


def test_api_ratings_concurrent_reversed_lists_no_errors_exact_labels(keys):
    ann_key, ben_key = keys
    failures = []
    for n in range(ROUNDS):
        ann_stars, ben_stars = n % 4, 3 - n % 4
        results = post_together([(ann_key, body(PAIRS, ann_stars)), (ben_key, body(PAIRS[::-1], ben_stars))])
        failures += [(n, status, content) for status, content in results if status != 201]

    assert failures == []
    assert Rating.objects.count() == 2 * len(PAIRS)
    # Last round (n = 24): ann 0 stars, ben 3; the median of two is their mean rounded down, 1.
    assert set(Label.objects.values_list("gain", "rater_count", "mean_stars", "disagreement")) == {
        (1, 2, 1.5, 3)
    }
    assert Label.objects.count() == len(PAIRS)


def test_api_ratings_aborted_every_attempt_503_retry_after_nothing_stored(keys, monkeypatch):
    def deadlocked(pairs):
        try:
            raise psycopg.errors.DeadlockDetected("deadlock detected")
        except psycopg.errors.Error as exc:
            raise OperationalError(str(exc)) from exc

    monkeypatch.setattr(record, "_lock_pairs", deadlocked)
    monkeypatch.setattr(locks, "TRANSACTION_RETRY_BACKOFF_SECONDS", 0.0)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {keys[0]}")

    response = client.post(URL, body(PAIRS, 2), format="json")

    assert response.status_code == 503
    assert response["Retry-After"] == "1"
    assert response.json() == {
        "detail": "Other ratings of the same answers were being saved at the same time; "
        "nothing was stored after 4 attempts. Try again."
    }
    assert Rating.objects.count() == 0
