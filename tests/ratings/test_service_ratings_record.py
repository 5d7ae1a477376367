"""ratings_record: several ratings of one rater, all or nothing, pairs locked in one order, retried when
PostgreSQL aborts the transaction for a deadlock or a serialization failure."""

from __future__ import annotations

import psycopg.errors
import pytest
from django.core.exceptions import ValidationError
from django.db import OperationalError, connection

from ratings.models import Label, Rating
from ratings.services import TRANSACTION_ATTEMPTS, RatingsBusy, locks, ratings_record, record, write

# Real transactions: a retried transaction must be the outermost one.
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def no_backoff(monkeypatch):
    monkeypatch.setattr(locks, "TRANSACTION_RETRY_BACKOFF_SECONDS", 0.0)


def aborted(error: type[psycopg.errors.Error]) -> OperationalError:
    """The Django error PostgreSQL's abort arrives as (Django wraps the driver's error as its cause)."""
    try:
        try:
            raise error("aborted by the test")
        except psycopg.errors.Error as exc:
            raise OperationalError(str(exc)) from exc
    except OperationalError as wrapped:
        return wrapped


def failing_first(monkeypatch, times: int, error: type[psycopg.errors.Error]) -> list[int]:
    """Make the first ``times`` pair-lockings fail as PostgreSQL would; returns the call count (a list)."""
    real, calls = record._lock_pairs, [0]

    def lock(pairs):
        calls[0] += 1
        if calls[0] <= times:
            raise aborted(error)
        real(pairs)

    monkeypatch.setattr(record, "_lock_pairs", lock)
    return calls


def failing_first_write(monkeypatch, times: int, error: type[psycopg.errors.Error]) -> list[int]:
    """The same for a single rating, which is written in one statement without ``_lock_pairs``."""
    real, calls = write._rating_write_postgresql, [0]

    def failing(*args):
        calls[0] += 1
        if calls[0] <= times:
            raise aborted(error)
        return real(*args)

    monkeypatch.setattr(write, "_rating_write_postgresql", failing)
    return calls


# A list of two (its pairs locked first by ``_lock_pairs``) and a single rating (one statement).
SIZES = {"two": failing_first, "one": failing_first_write}


@pytest.mark.parametrize("error", [psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure])
def test_ratings_record_aborted_once_retried_and_stored(corpus, rater, monkeypatch, error):
    calls = failing_first(monkeypatch, 1, error)
    q, a1, a2 = corpus.q["q1"], corpus.a["d1"], corpus.a["d2"]

    ratings = ratings_record(rater=rater, ratings=[(q, a1, 3), (q, a2, 1)])

    assert calls == [2]
    assert [r.stars for r in ratings] == [3, 1]
    assert sorted(Label.objects.values_list("answer__external_id", "gain", "rater_count")) == [
        ("d1", 3, 1),
        ("d2", 1, 1),
    ]


@pytest.mark.parametrize("size", SIZES)
def test_ratings_record_aborted_every_attempt_busy_nothing_stored(corpus, rater, monkeypatch, size):
    calls = SIZES[size](monkeypatch, 100, psycopg.errors.DeadlockDetected)
    q, a1, a2 = corpus.q["q1"], corpus.a["d1"], corpus.a["d2"]
    ratings = [(q, a1, 3), (q, a2, 1)] if size == "two" else [(q, a1, 3)]

    with pytest.raises(RatingsBusy, match="nothing was stored after 4 attempts"):
        ratings_record(rater=rater, ratings=ratings)

    assert calls == [TRANSACTION_ATTEMPTS] == [4]
    assert Rating.objects.count() == 0


@pytest.mark.parametrize("size", SIZES)
def test_ratings_record_other_database_error_not_retried(corpus, rater, monkeypatch, size):
    calls = SIZES[size](monkeypatch, 100, psycopg.errors.AdminShutdown)
    q, a1, a2 = corpus.q["q1"], corpus.a["d1"], corpus.a["d2"]
    ratings = [(q, a1, 3), (q, a2, 1)] if size == "two" else [(q, a1, 3)]

    with pytest.raises(OperationalError):
        ratings_record(rater=rater, ratings=ratings)

    assert calls == [1]


@pytest.mark.parametrize("error", [psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure])
def test_ratings_record_one_rating_aborted_once_retried_and_stored(corpus, rater, monkeypatch, error):
    calls = failing_first_write(monkeypatch, 1, error)

    ratings = ratings_record(rater=rater, ratings=[(corpus.q["q1"], corpus.a["d1"], 2)])

    assert calls == [2]
    assert [r.stars for r in ratings] == [2]
    assert list(Label.objects.values_list("answer__external_id", "gain", "rater_count")) == [("d1", 2, 1)]


def test_ratings_record_bad_stars_later_in_list_stores_nothing(corpus, rater):
    q = corpus.q["q1"]

    with pytest.raises(ValidationError):
        ratings_record(rater=rater, ratings=[(q, corpus.a["d1"], 3), (q, corpus.a["d2"], 7)])

    assert Rating.objects.count() == 0


def test_ratings_record_holds_every_pair_lock_until_commit(corpus, rater, monkeypatch):
    """All the list's pairs are locked before the first rating is written (in ascending key order)."""
    held: list[int] = []
    real_record = record.rating_record

    def recording(**kwargs):
        if not held:
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT (classid::bigint << 32) | objid::bigint FROM pg_locks "
                    "WHERE locktype = 'advisory' AND pid = pg_backend_pid() ORDER BY 1"
                )
                held.extend(k for (k,) in cursor.fetchall())
        return real_record(**kwargs)

    monkeypatch.setattr(record, "rating_record", recording)
    q1, q3 = corpus.q["q1"], corpus.q["q3"]
    pairs = [(q3, corpus.a["d5"]), (q1, corpus.a["d2"]), (q1, corpus.a["d1"])]

    ratings_record(rater=rater, ratings=[(q, a, 2) for q, a in pairs])

    assert held == sorted(locks._pair_key(q.pk, a.pk) for q, a in pairs)
