"""Writes of ratings and the labels aggregated from them.

A label is the median of its raters' stars with a half rounded down (2 and 3 → 2; 1, 2, 3 → 2), so a
single lenient rater can't lift a pair above what most raters said. ``rating_record`` writes the rating
and its label in one transaction, serialised per question–answer pair so concurrent raters (or a
double-click) never lose or duplicate anything. ``ratings_record`` writes several at once (an API list,
the rating page's plain form): it locks all their pairs first in one fixed order, so two lists of the
same pairs in different orders can't deadlock, and runs the transaction again when PostgreSQL aborts it
anyway (deadlock or serialization failure), then gives up with ``RatingsBusy`` (the API's 503).
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import OperationalError, connection, transaction
from django.utils import timezone

from corpus.models import Answer, Question
from ratings.models import NOTE_MAX_LENGTH, JudgeAccount, Label, Rating, RatingHistory, RatingSource, Skip

Pair = tuple[int, int]  # (question_id, answer_id)


def aggregate_stars(stars: Sequence[int]) -> tuple[int, float, int]:
    """(gain, mean, disagreement) of raters' stars: gain = median, a half rounded down; disagreement = max − min."""
    if not stars:
        raise ValueError("a label needs at least one rating")
    ordered = sorted(stars)
    n = len(ordered)
    middle = n // 2
    gain = ordered[middle] if n % 2 else (ordered[middle - 1] + ordered[middle]) // 2
    return gain, sum(ordered) / n, ordered[-1] - ordered[0]


def validate_stars(value: object) -> int:
    """Stars as an int 0–3, or a ValidationError naming the field."""
    if isinstance(value, bool):
        raise ValidationError({"stars": "Stars must be a whole number from 0 to 3."})
    try:
        stars = int(str(value).strip()) if not isinstance(value, int) else value
    except (TypeError, ValueError):
        raise ValidationError(
            {"stars": f"Stars must be a whole number from 0 to 3, not {value!r}."}
        ) from None
    if not 0 <= stars <= 3:
        raise ValidationError({"stars": f"Stars must be from 0 to 3, not {stars}."})
    return stars


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
    The locks are held to the end of the transaction; taking one again later (``rating_record``) is free.
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


def rating_record(
    *,
    rater: User,
    question: Question,
    answer: Answer,
    stars: object,
    source: str = RatingSource.WEB,
    note: str | None = None,
) -> Rating:
    """Record (or change) the rater's stars for the pair and update the pair's label.

    ``note`` (None: leave it as it is) sets the rating's note in the same transaction
    (``rating_note_set``).

    All in one transaction, serialised per pair (see ``_lock_pair``): the rating, its history row when the
    stars change, and the pair's label. On PostgreSQL the whole write is one round trip (see
    ``_rating_record_postgresql``); elsewhere it goes through the ORM.
    """
    value = validate_stars(stars)
    if answer.collection_id != question.collection_id:
        raise ValidationError({"answer": "This answer belongs to another collection than the question."})
    if note is not None:
        cleaned = validate_note(note)
        with transaction.atomic():
            before = (
                Rating.objects.filter(rater=rater, question=question, answer=answer)
                .values_list("stars", flat=True)
                .first()
            )
            saved = rating_record(rater=rater, question=question, answer=answer, stars=value, source=source)
            # One save, one step back: a new rating or a change of stars already has its undo (removing
            # the rating, or the history row that keeps the old note too), so the note adds none.
            rating = _note_set(rater, question, answer, cleaned, history=before == value)
            rating.saved_label = saved.saved_label  # a note leaves the label as it is
            return rating
    if connection.vendor == "postgresql":
        if connection.in_atomic_block:
            # Part of the caller's transaction: a failure must roll all of it back, as before.
            with transaction.atomic(savepoint=False):
                return _rating_record_postgresql(rater, question, answer, value, source)
        return _rating_record_postgresql(rater, question, answer, value, source)
    return _rating_record_orm(rater, question, answer, value, source)


@transaction.atomic
def _rating_record_orm(rater: User, question: Question, answer: Answer, value: int, source: str) -> Rating:
    _lock_pair(question.pk, answer.pk)
    rating = Rating.objects.filter(rater=rater, question=question, answer=answer).first()
    if rating is None:
        rating = Rating.objects.create(
            rater=rater, question=question, answer=answer, stars=value, source=source
        )
    elif rating.stars != value:
        RatingHistory.objects.create(
            rating=rating,
            previous_stars=rating.stars,
            previous_source=rating.source,
            previous_note=rating.note,
            new_stars=value,
        )
        rating.stars, rating.source = value, source
        rating.save(update_fields=["stars", "source", "updated_at"])
    label = _labels_write_python({(question.pk, answer.pk)}).get((question.pk, answer.pk))
    rating.saved_label = (label.gain, label.rater_count) if label else None
    return rating


_RATING_COLUMNS = [
    "id",
    "rater_id",
    "question_id",
    "answer_id",
    "stars",
    "source",
    "note",
    "created_at",
    "updated_at",
]


# The hot path's two statements, prepared once per database connection (``_prepare_hot_statements``):
# PostgreSQL plans statements this size in longer than it runs them (the label statement: 0.4–0.5 ms to
# plan, 0.2 ms to run, warm). SQL-level PREPARE, because the save sends its statements in one
# simple-protocol query string, which the driver's own (extended-protocol) preparing cannot carry.
# Prepared statements belong to the database session: a pooler that shares sessions between clients
# (PgBouncer in transaction mode) would break them; this app connects to PostgreSQL directly.
_WRITE, _LABELS = "rank_trainer_rating_write_1", "rank_trainer_labels_1"


def _write_statement() -> str:
    """Insert the rating, or update it and keep its history row if the stars changed; the row as it now is.
    Parameters: $1 rater, $2 question, $3 answer, $4 stars, $5 source, $6 now."""
    rating_table, history_table = Rating._meta.db_table, RatingHistory._meta.db_table
    return f"""
        WITH old AS (
            SELECT id, stars, source, note FROM {rating_table}
            WHERE rater_id = $1 AND question_id = $2 AND answer_id = $3
        ),
        inserted AS (
            INSERT INTO {rating_table} (rater_id, question_id, answer_id, stars, source, created_at, updated_at)
            SELECT $1, $2, $3, $4, $5, $6, $6 WHERE NOT EXISTS (SELECT 1 FROM old)
            RETURNING {", ".join(_RATING_COLUMNS)}
        ),
        updated AS (
            UPDATE {rating_table} r SET stars = $4, source = $5, updated_at = $6
            FROM old WHERE r.id = old.id AND old.stars <> $4
            RETURNING {", ".join("r." + c for c in _RATING_COLUMNS)}
        ),
        history AS (
            INSERT INTO {history_table}
                (rating_id, previous_stars, previous_source, previous_note, new_stars, changed_at)
            SELECT id, stars, source, note, $4, $6 FROM old WHERE stars <> $4
        )
        SELECT * FROM inserted
        UNION ALL SELECT * FROM updated
        UNION ALL SELECT {", ".join("r." + c for c in _RATING_COLUMNS)}
            FROM {rating_table} r JOIN old ON r.id = old.id WHERE old.stars = $4
    """


def _prepare_hot_statements(cursor: Any) -> None:
    """PREPARE ``_WRITE`` and ``_LABELS`` on this thread's database connection unless it has them.

    Prepared statements outlive transactions (a rollback keeps them) and end with the session, so they are
    tracked by the driver's connection object: a new connection (``CONN_MAX_AGE``, a dropped one) prepares
    again. A connection is recorded only once its PREPARE has succeeded."""
    raw = connection.connection  # open: ``cursor`` is one of its cursors
    if getattr(connection, "_rank_trainer_prepared", None) is raw:
        return
    labels = _labels_statement("$1", "$2", "$3", returning_labels=True)
    cursor.execute(
        f"PREPARE {_WRITE}(bigint, bigint, bigint, smallint, varchar, timestamptz) AS {_write_statement()};\n"
        f"PREPARE {_LABELS}(bigint[], bigint[], timestamptz) AS {labels}"
    )
    connection._rank_trainer_prepared = raw  # type: ignore[attr-defined]


def _rating_record_postgresql(
    rater: User, question: Question, answer: Answer, value: int, source: str
) -> Rating:
    """``_rating_record_orm`` as three statements sent in one query string: a rating save is the hot path
    and each round trip through the ORM and the driver costs more CPU than the statement itself.

    1. take the pair's advisory lock (held to the end of the transaction);
    2. insert the rating, or update it and write its history row if the stars changed, returning the row
       (the prepared ``_WRITE``);
    3. recompute the pair's label (the prepared ``_LABELS``, ``_labels_recompute_sql``'s statement),
       returning it (``Rating.saved_label``: the API answers with it, and reading it again would be one more
       round trip).

    Sent as one simple-protocol query (Django's psycopg cursor binds parameters client-side), PostgreSQL
    runs the statements in order in one transaction: the implicit one of a multi-statement query when
    the caller has none, else the caller's. Each statement takes a new snapshot (READ COMMITTED), so
    statements 2 and 3 run after the lock is held and see every rating committed before it was granted,
    exactly like the separate statements they replace.
    """
    now = timezone.now()
    with connection.cursor() as cursor:
        _prepare_hot_statements(cursor)
        cursor.execute(
            f"SELECT pg_advisory_xact_lock(%s);\nEXECUTE {_WRITE}(%s, %s, %s, %s, %s, %s);\n"
            f"EXECUTE {_LABELS}(%s, %s, %s)",
            [
                _pair_key(question.pk, answer.pk),
                *(rater.pk, question.pk, answer.pk, value, source, now),
                *([question.pk], [answer.pk], now),
            ],
        )
        cursor.nextset()
        row = cursor.fetchone()
        cursor.nextset()
        label = cursor.fetchone()  # (question, answer, gain, rater count), or None: the pair has no label
    rating = Rating.from_db(connection.alias, _RATING_COLUMNS, row)
    rating.rater, rating.question, rating.answer = rater, question, answer
    rating.saved_label = (label[2], label[3]) if label else None
    return rating


def ratings_record(
    *,
    rater: User,
    ratings: Sequence[tuple[Question, Answer, object]],
    source: str = RatingSource.WEB,
    notes: Sequence[str | None] | None = None,
) -> list[Rating]:
    """Record several ``(question, answer, stars)`` of one rater, all or nothing, with their labels.

    ``notes``, when given, holds each rating's note (None: leave it as it is).

    The pairs are locked first, all of them, in one fixed order (``_lock_pairs``), so lists of the same
    pairs in any order never deadlock each other; a transaction PostgreSQL still aborts (a deadlock with
    another kind of writer, a serialization failure) is run again a few times before ``RatingsBusy``.
    Bad stars or a pair across collections raise ``ValidationError`` and store nothing.
    """
    for _, _, stars in ratings:
        validate_stars(stars)
    each_note = list(notes) if notes is not None else [None] * len(ratings)
    for note in each_note:
        if note is not None:
            validate_note(note)
    if len(ratings) == 1:
        # One pair needs no lock order, and ``rating_record`` is already one transaction (on PostgreSQL
        # one round trip): wrapping it would add BEGIN, the lock and COMMIT to the API's most common call.
        ((question, answer, stars),) = ratings
        return _run_retrying(
            lambda: [
                rating_record(
                    rater=rater,
                    question=question,
                    answer=answer,
                    stars=stars,
                    source=source,
                    note=each_note[0],
                )
            ]
        )

    @transaction.atomic
    def work() -> list[Rating]:
        _lock_pairs((question.pk, answer.pk) for question, answer, _ in ratings)
        return [
            rating_record(
                rater=rater, question=question, answer=answer, stars=stars, source=source, note=note
            )
            for (question, answer, stars), note in zip(ratings, each_note, strict=True)
        ]

    return _run_retrying(work)


def validate_note(value: object) -> str:
    """A note as stored: text, stripped, at most ``NOTE_MAX_LENGTH`` characters, no NUL (ValidationError
    naming the field ``note`` otherwise)."""
    if not isinstance(value, str):
        raise ValidationError({"note": "The note must be text."})
    note = value.strip()
    if len(note) > NOTE_MAX_LENGTH:
        raise ValidationError(
            {"note": f"The note can be at most {NOTE_MAX_LENGTH} characters, not {len(note)}."}
        )
    if "\x00" in note:
        raise ValidationError({"note": "The note contains a NUL character (U+0000), which cannot be stored."})
    return note


@transaction.atomic
def rating_note_set(*, rater: User, question: Question, answer: Answer, note: object) -> Rating:
    """Set (or clear, with "") the note on the rater's rating of the pair.

    A note belongs to a rating, so the pair must be rated first (ValidationError on ``note``). A changed
    note keeps the rating's previous state in its history (stars unchanged), so undo takes it back like
    a change of stars; the label does not depend on notes and is left alone.
    """
    return _note_set(rater, question, answer, validate_note(note), history=True)


def _note_set(rater: User, question: Question, answer: Answer, cleaned: str, *, history: bool) -> Rating:
    _lock_pair(question.pk, answer.pk)
    rating = Rating.objects.filter(rater=rater, question=question, answer=answer).first()
    if rating is None:
        raise ValidationError({"note": "Rate the answer before adding a note to the rating."})
    if rating.note != cleaned and history:
        RatingHistory.objects.create(
            rating=rating,
            previous_stars=rating.stars,
            previous_source=rating.source,
            previous_note=rating.note,
            new_stars=rating.stars,
        )
    if rating.note != cleaned:
        rating.note = cleaned
        rating.save(update_fields=["note", "updated_at"])
    rating.rater, rating.question, rating.answer = rater, question, answer
    return rating


@transaction.atomic
def rating_undo(*, rater: User, question: Question, answer: Answer) -> Rating | None:
    """Take back the rater's last change to the pair: restore the previous stars, or remove a first rating.

    Returns the rating as it now is, or None when it was removed.
    """
    _lock_pair(question.pk, answer.pk)
    rating = Rating.objects.filter(rater=rater, question=question, answer=answer).first()
    if rating is None:
        return None
    last = rating.history.order_by("-changed_at", "-id").first()
    if last is None:
        rating.delete()
        result = None
    else:
        rating.stars, rating.source, rating.note = (
            last.previous_stars,
            last.previous_source,
            last.previous_note,
        )
        rating.save(update_fields=["stars", "source", "note", "updated_at"])
        last.delete()
        result = rating
    labels_recompute(pairs=[(question.pk, answer.pk)])
    return result


def labels_recompute(*, pairs: Iterable[Pair]) -> int:
    """Recompute the labels of the given pairs from their ratings (a pair with no ratings loses its label).

    Returns the number of labels written. Call inside the transaction that changed the ratings.
    """
    wanted = set(pairs)
    if not wanted:
        return 0
    if connection.vendor == "postgresql":
        return _labels_recompute_postgresql(wanted)
    return _labels_recompute_python(wanted)


def counted_stars(
    ratings: Sequence[tuple[int, int | None]], trust: dict[int, tuple[bool, bool]]
) -> list[int]:
    """The stars that count toward one pair's label, from ``(stars, judge rater id or None)`` per rating.

    ``trust`` maps a judge's rater id to (counts, human_wins). People's ratings always count; a judge's
    counts only when trusted, and with ``human_wins`` only when no person rated the pair.
    """
    humans = [stars for stars, judge in ratings if judge is None]
    counted = list(humans)
    for stars, judge in ratings:
        if judge is None:
            continue
        counts, human_wins = trust.get(judge, (False, True))
        if counts and not (human_wins and humans):
            counted.append(stars)
    return counted


def _labels_recompute_python(wanted: set[Pair]) -> int:
    """Any database: read the pairs' ratings, keep those that count (``counted_stars``), aggregate with
    ``aggregate_stars``, upsert, delete the unrated."""
    return len(_labels_write_python(wanted))


def _labels_write_python(wanted: set[Pair]) -> dict[Pair, Label]:
    """``_labels_recompute_python``'s work; returns the labels written, by pair."""
    trust = {
        user_id: (counts, human_wins)
        for user_id, counts, human_wins in JudgeAccount.objects.values_list("user_id", "counts", "human_wins")
    }
    ratings_by_pair: dict[Pair, list[tuple[int, int | None]]] = defaultdict(list)
    question_ids = {q for q, _ in wanted}
    for chunk in _chunks(sorted(question_ids), 500):
        rows = Rating.objects.filter(question_id__in=chunk).values_list(
            "question_id", "answer_id", "stars", "rater_id"
        )
        for q, a, s, rater_id in rows:
            if (q, a) in wanted:
                ratings_by_pair[(q, a)].append((s, rater_id if rater_id in trust else None))
    labels = []
    labelled: set[Pair] = set()
    for (q, a), ratings in ratings_by_pair.items():
        stars = counted_stars(ratings, trust)
        if not stars:
            continue
        gain, mean, spread = aggregate_stars(stars)
        humans = sum(1 for _, judge in ratings if judge is None)
        labelled.add((q, a))
        labels.append(
            Label(
                question_id=q,
                answer_id=a,
                gain=gain,
                rater_count=len(stars),
                mean_stars=mean,
                disagreement=spread,
                judge_count=len(stars) - humans,
            )
        )
    Label.objects.bulk_create(
        labels,
        batch_size=1000,
        update_conflicts=True,
        unique_fields=["question", "answer"],
        update_fields=["gain", "rater_count", "mean_stars", "disagreement", "judge_count", "updated_at"],
    )
    unrated = wanted - labelled
    for q, a in unrated:
        Label.objects.filter(question_id=q, answer_id=a).delete()
    return {(label.question_id, label.answer_id): label for label in labels}


def _labels_recompute_postgresql(wanted: set[Pair]) -> int:
    """``labels_recompute`` in one statement: the same aggregate (see ``aggregate_stars``) computed where the
    ratings are. A rating save is on the hot path and this saves a round trip and most of the ORM work.

    percentile_cont(0.5) is the median, the mean of the two middle values for an even count, so its floor
    is the median with a half rounded down; the mean is a float division like Python's. Which ratings
    count is ``counted_stars``'s rule: people's always; a judge's (a rater with a JudgeAccount) only when
    trusted, and with human_wins only on pairs no person rated.
    """
    sql, params = _labels_recompute_sql(wanted)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        written, _ = cursor.fetchone()
    return written


def _labels_recompute_sql(wanted: set[Pair], *, returning_labels: bool = False) -> tuple[str, list[Any]]:
    """The statement of ``_labels_recompute_postgresql`` and its parameters; it returns (written, removed),
    or with ``returning_labels`` the labels written: (question, answer, gain, rater count) rows."""
    question_ids, answer_ids = zip(*wanted, strict=True)
    sql = _labels_statement("%s", "%s", "%s", returning_labels=returning_labels)
    return sql, [list(question_ids), list(answer_ids), timezone.now()]


def _labels_statement(questions: str, answers: str, now: str, *, returning_labels: bool) -> str:
    """``_labels_recompute_sql``'s text with these placeholders for its three parameters."""
    label, rating, judge = Label._meta.db_table, Rating._meta.db_table, JudgeAccount._meta.db_table
    # PostgreSQL runs a data-modifying CTE (``removed``) to completion whether the final SELECT reads it or not.
    result = (
        "SELECT * FROM written"
        if returning_labels
        else "SELECT (SELECT count(*) FROM written), (SELECT count(*) FROM removed)"
    )
    return f"""
        WITH wanted(question_id, answer_id) AS (SELECT * FROM unnest({questions}::bigint[], {answers}::bigint[])),
        pair_ratings AS (
            SELECT r.question_id, r.answer_id, r.stars, j.id IS NOT NULL AS by_judge,
                   coalesce(j.counts, true) AS counts, coalesce(j.human_wins, false) AS human_wins
            FROM {rating} r JOIN wanted w ON r.question_id = w.question_id AND r.answer_id = w.answer_id
            LEFT JOIN {judge} j ON j.user_id = r.rater_id
        ),
        counted AS (
            SELECT p.* FROM pair_ratings p
            WHERE p.counts AND NOT (p.human_wins AND EXISTS (
                SELECT 1 FROM pair_ratings h
                WHERE h.question_id = p.question_id AND h.answer_id = p.answer_id AND NOT h.by_judge
            ))
        ),
        aggregated AS (
            SELECT question_id, answer_id,
                   floor(percentile_cont(0.5) WITHIN GROUP (ORDER BY stars))::smallint AS gain,
                   count(*) AS rater_count,
                   sum(stars)::float8 / count(*) AS mean_stars,
                   (max(stars) - min(stars))::smallint AS disagreement,
                   count(*) FILTER (WHERE by_judge) AS judge_count
            FROM counted
            GROUP BY question_id, answer_id
        ),
        written AS (
            INSERT INTO {label} (question_id, answer_id, gain, rater_count, mean_stars, disagreement,
                                 judge_count, updated_at)
            SELECT question_id, answer_id, gain, rater_count, mean_stars, disagreement, judge_count, {now}
            FROM aggregated
            ON CONFLICT (question_id, answer_id) DO UPDATE SET
                gain = EXCLUDED.gain, rater_count = EXCLUDED.rater_count, mean_stars = EXCLUDED.mean_stars,
                disagreement = EXCLUDED.disagreement, judge_count = EXCLUDED.judge_count,
                updated_at = EXCLUDED.updated_at
            RETURNING question_id, answer_id, gain, rater_count
        ),
        removed AS (
            DELETE FROM {label} l USING wanted w
            WHERE l.question_id = w.question_id AND l.answer_id = w.answer_id
              AND NOT EXISTS (
                  SELECT 1 FROM aggregated a WHERE a.question_id = w.question_id AND a.answer_id = w.answer_id
              )
            RETURNING 1
        )
        {result}
    """


@dataclass(frozen=True)
class RatingsImportSummary:
    created: int
    updated: int
    unchanged: int


@transaction.atomic
def ratings_import(
    *, rater: User, judgments: Sequence[tuple[int, int, int]], source: str = RatingSource.IMPORT
) -> RatingsImportSummary:
    """Bulk-record ``(question_id, answer_id, stars)`` by one rater, e.g. an imported ground truth.

    Ratings that already have these stars are left alone, so re-importing the same file changes nothing.
    The caller has validated ids and stars (importers report errors with file and line first).
    """
    existing = {
        (r.question_id, r.answer_id): r
        for r in Rating.objects.filter(rater=rater, question_id__in={q for q, _, _ in judgments})
    }
    to_create, to_update, history = [], [], []
    now = timezone.now()
    for q, a, stars in judgments:
        rating = existing.get((q, a))
        if rating is None:
            to_create.append(Rating(rater=rater, question_id=q, answer_id=a, stars=stars, source=source))
        elif rating.stars != stars:
            history.append(
                RatingHistory(
                    rating=rating,
                    previous_stars=rating.stars,
                    previous_source=rating.source,
                    previous_note=rating.note,
                    new_stars=stars,
                )
            )
            rating.stars, rating.source, rating.updated_at = stars, source, now
            to_update.append(rating)
    Rating.objects.bulk_create(to_create, batch_size=1000)
    Rating.objects.bulk_update(to_update, ["stars", "source", "updated_at"], batch_size=1000)
    RatingHistory.objects.bulk_create(history, batch_size=1000)
    changed = [(r.question_id, r.answer_id) for r in [*to_create, *to_update]]
    labels_recompute(pairs=changed)
    return RatingsImportSummary(
        len(to_create), len(to_update), len(judgments) - len(to_create) - len(to_update)
    )


SKIP_REASON_MAX_LENGTH: int = Skip._meta.get_field("reason").max_length or 500


@transaction.atomic
def question_skip(*, rater: User, question: Question, reason: str = "") -> Skip:
    """The rater can't judge the question: the queue stops offering it to them. Skipping again updates the reason."""
    reason = (reason or "").strip()
    if len(reason) > SKIP_REASON_MAX_LENGTH:
        raise ValidationError(
            {"reason": f"The reason can be at most {SKIP_REASON_MAX_LENGTH} characters, not {len(reason)}."}
        )
    skip, created = Skip.objects.get_or_create(rater=rater, question=question, defaults={"reason": reason})
    if not created and reason and skip.reason != reason:
        skip.reason = reason
        skip.save(update_fields=["reason"])
    return skip


def _chunks(items: list[int], size: int) -> Iterable[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def judge_rating_record(
    *, account: JudgeAccount, question: Question, answer: Answer, stars: object, reply: str = ""
) -> Rating:
    """Record (or change) a judge's stars for a pair, with its raw reply, and update the pair's label.

    A judge rates only in its own collection: a pair of another collection is a ValidationError.
    """
    value = validate_stars(stars)
    if question.collection_id != account.collection_id or answer.collection_id != account.collection_id:
        raise ValidationError({"question": "A judge rates only pairs of its own collection."})
    with transaction.atomic():
        _lock_pair(question.pk, answer.pk)
        rating = Rating.objects.filter(rater_id=account.user_id, question=question, answer=answer).first()
        if rating is None:
            rating = Rating.objects.create(
                rater_id=account.user_id,
                question=question,
                answer=answer,
                stars=value,
                source=RatingSource.JUDGE,
                reply=reply,
            )
        else:
            if rating.stars != value:
                RatingHistory.objects.create(
                    rating=rating, previous_stars=rating.stars, previous_source=rating.source, new_stars=value
                )
            rating.stars, rating.source, rating.reply = value, RatingSource.JUDGE, reply
            rating.save(update_fields=["stars", "source", "reply", "updated_at"])
        labels_recompute(pairs=[(question.pk, answer.pk)])
    return rating


@transaction.atomic
def judge_trust_set(*, account: JudgeAccount, counts: bool, human_wins: bool) -> int:
    """Whether the judge's ratings count toward labels (and whether people win over it on a pair);
    recomputes the labels of every pair the judge rated. Returns the number of labels written."""
    JudgeAccount.objects.select_for_update().filter(pk=account.pk).update(
        counts=counts, human_wins=human_wins
    )
    account.counts, account.human_wins = counts, human_wins
    pairs = list(Rating.objects.filter(rater_id=account.user_id).values_list("question_id", "answer_id"))
    _lock_pairs(pairs)
    return labels_recompute(pairs=pairs)


@transaction.atomic
def judge_ratings_record(
    *, account: JudgeAccount, judgments: Sequence[tuple[int, int, object, str, float | None]]
) -> int:
    """Record several ``(question id, answer id, stars, reply, certainty)`` of one judge at once, with
    their labels (certainty: how sure the judge was, None when unknown).

    One transaction with every pair locked in one fixed order (``_lock_pairs``): a judging run writes
    what its calls returned in batches, so a judgment costs a share of one round trip, not several.
    All or nothing: bad stars or a pair outside the judge's collection raise ValidationError.
    """
    rows = [(q, a, validate_stars(stars), reply, certainty) for q, a, stars, reply, certainty in judgments]
    if not rows:
        return 0
    question_ids, answer_ids = {q for q, *_ in rows}, {a for _, a, *_ in rows}
    own_questions = Question.objects.filter(pk__in=question_ids, collection_id=account.collection_id).count()
    own_answers = Answer.objects.filter(pk__in=answer_ids, collection_id=account.collection_id).count()
    if own_questions != len(question_ids) or own_answers != len(answer_ids):
        raise ValidationError({"question": "A judge rates only pairs of its own collection."})
    pairs = [(q, a) for q, a, *_ in rows]
    _lock_pairs(pairs)
    existing = {
        (r.question_id, r.answer_id): r
        for r in Rating.objects.filter(rater_id=account.user_id, question_id__in=question_ids)
    }
    now = timezone.now()
    created, updated, history = [], [], []
    for q, a, stars, reply, certainty in rows:
        rating = existing.get((q, a))
        if rating is None:
            created.append(
                Rating(
                    rater_id=account.user_id,
                    question_id=q,
                    answer_id=a,
                    stars=stars,
                    source=RatingSource.JUDGE,
                    reply=reply,
                    certainty=certainty,
                )
            )
            continue
        if rating.stars != stars:
            history.append(
                RatingHistory(
                    rating=rating, previous_stars=rating.stars, previous_source=rating.source, new_stars=stars
                )
            )
        rating.stars, rating.source, rating.reply, rating.updated_at = stars, RatingSource.JUDGE, reply, now
        rating.certainty = certainty
        updated.append(rating)
    Rating.objects.bulk_create(created, batch_size=1000)
    Rating.objects.bulk_update(
        updated, ["stars", "source", "reply", "certainty", "updated_at"], batch_size=1000
    )
    RatingHistory.objects.bulk_create(history, batch_size=1000)
    labels_recompute(pairs=pairs)
    return len(rows)
