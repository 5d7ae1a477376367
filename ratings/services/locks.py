"""Concurrent writers: each pair's lock, and running again a transaction PostgreSQL aborted.

Every writer of a pair's ratings holds the pair's lock (``_lock_pair``, or ``_lock_pairs`` for several
in one fixed order) to the end of its transaction, so concurrent raters (or a double-click) never lose
or duplicate anything and a label is always computed from every rating committed before it. A list
that PostgreSQL still aborts (deadlock, serialization failure) runs again (``_run_retrying``), then
gives up with ``RatingsBusy`` (the API's 503).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

from django.db import OperationalError, connection

from .labels import Pair


def _lock_pair(question_id: int, answer_id: int) -> None:
    """Serialise writers of one pair until the transaction ends.

    PostgreSQL: a transaction-scoped advisory lock (there may be no row to lock yet for a first rating).
    SQLite: transactions begin IMMEDIATE (see settings), which already serialises all writers.
    """
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_pair_key(question_id, answer_id)])


def _pair_key(question_id: int, answer_id: int) -> int:
    """The pair's advisory lock key (every writer of a pair's ratings uses this one)."""
    return (question_id * 1_000_003 + answer_id) % (2**63 - 1)


def _lock_pairs(pairs: Iterable[Pair]) -> None:
    """Take the advisory locks of several pairs, in one fixed order (ascending key), in one round trip.

    Two transactions that each lock several pairs must take them in the same order, or each can hold a
    lock the other waits for (PostgreSQL then aborts one: "deadlock detected"). Ascending key order is
    the same for every writer, so a writer waits at most for one that is ahead of it, never in a cycle.
    The locks are held to the end of the transaction; taking one again later (``rating_write``) is free.
    """
    if connection.vendor != "postgresql":
        return
    keys = sorted({_pair_key(q, a) for q, a in pairs})
    if not keys:
        return
    with connection.cursor() as cursor:
        # A function scan of unnest() returns the array's elements in order, and each row's lock is taken
        # as that row is produced, so the locks are taken in ascending order.
        cursor.execute("SELECT pg_advisory_xact_lock(k) FROM unnest(%s::bigint[]) AS t(k)", [keys])
        cursor.fetchall()


# SQLSTATEs of a transaction PostgreSQL aborted because of other transactions, which can simply run again:
# deadlock_detected and serialization_failure.
RETRYABLE_SQLSTATES = frozenset({"40P01", "40001"})
# Attempts of a retried transaction, and the first wait between them (doubling, with jitter).
TRANSACTION_ATTEMPTS = 4
TRANSACTION_RETRY_BACKOFF_SECONDS = 0.05

T = TypeVar("T")


class RatingsBusy(Exception):
    """The ratings' transaction was aborted by conflicting writers on every attempt; nothing was stored."""


def is_retryable(exc: BaseException) -> bool:
    """Whether the database aborted the transaction for a deadlock or a serialization failure."""
    if not isinstance(exc, OperationalError):
        return False
    cause = exc.__cause__
    return getattr(cause, "sqlstate", None) in RETRYABLE_SQLSTATES


def _run_retrying(work: Callable[[], T]) -> T:
    """Run ``work`` (a whole transaction) again when PostgreSQL aborts it for a deadlock or serialization
    failure, up to ``TRANSACTION_ATTEMPTS`` times; then ``RatingsBusy``. Inside a caller's transaction
    nothing can be retried here (the caller's earlier statements are lost too), so it runs once."""
    if connection.in_atomic_block:
        return work()
    for attempt in range(1, TRANSACTION_ATTEMPTS + 1):
        try:
            return work()
        except OperationalError as exc:
            if not is_retryable(exc):
                raise
            if attempt == TRANSACTION_ATTEMPTS:
                raise RatingsBusy(
                    f"Other ratings of the same answers were being saved at the same time; "
                    f"nothing was stored after {attempt} attempts. Try again."
                ) from exc
            time.sleep(TRANSACTION_RETRY_BACKOFF_SECONDS * 2 ** (attempt - 1) * (0.5 + random.random()))
    raise AssertionError("unreachable")
