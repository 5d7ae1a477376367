"""The one write of ratings: the rating, its history, and its pair's label (the median rule), together.

Every path that stores stars comes here: people's saves (``record``: the rating page, the API), a
judge's judgments (``judge_ratings``) and imported ground truth (``imports``).

* ``rating_write`` writes one rater's stars for one pair and returns the rating with the label that
  write left (``Rating.saved_label``). It chooses how: on PostgreSQL a person's write is one round trip
  of prepared statements (``_rating_write_postgresql``, the hot path); anything else goes through the
  ORM (``_rating_write_orm``). Both do the same three steps in one transaction holding the pair's lock.
* ``ratings_write`` writes many pairs of one rater in bulk statements (a judging run's batch, an import
  of thousands of judgments, where a write per pair would cost a round trip or more each).

What a write changes (``_apply``, the one rule; the prepared ``_WRITE`` is it in SQL for people):

1. no rating yet: create it;
2. the stars changed: keep the rating's previous stars, source and note as a history row (undo restores
   them), then store the new stars and source;
3. a judge's write (it has a reply) always stores its reply and certainty (and stars and source) too;
4. otherwise the rating is left as it is;

then the pair's label is recomputed from its ratings (``labels``).

Callers validate first (stars 0–3 from ``validation``, the pair in the rater's collection): these
functions take typed values and check nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.utils import timezone

from corpus.models import Answer, Question
from ratings.models import Rating, RatingHistory

from .labels import _labels_statement, _labels_write_python, labels_recompute
from .locks import _lock_pair, _lock_pairs, _pair_key


class RatingRow(NamedTuple):
    """One pair's stars in a bulk write; a judge's with its reply and certainty (None: unknown)."""

    question_id: int
    answer_id: int
    stars: int
    reply: str | None = None
    certainty: float | None = None


@dataclass(frozen=True)
class RatingsWritten:
    """What a bulk write did: ratings created, updated, and left as they were."""

    created: int
    updated: int
    unchanged: int


def rating_write(
    *,
    rater: User,
    question: Question,
    answer: Answer,
    stars: int,
    source: str,
    reply: str | None = None,
    certainty: float | None = None,
) -> Rating:
    """Write the rater's ``stars`` for the pair (see the module docstring for what changes), with its
    history row and the pair's label, in one transaction serialised per pair (``_lock_pair``).

    ``reply`` is a judge's raw reply (None: a person's write); ``certainty`` how sure the judge was.
    Returns the rating as stored, with ``saved_label``: (gain, rater count) as this write left the
    pair's label, or None when the pair has none.

    Atomic either way, but not with ``transaction.atomic`` around the PostgreSQL path: outside a caller's
    transaction its one query string is a transaction of its own, and BEGIN and COMMIT would be two more
    round trips on every save. Inside one, a failure rolls the caller's transaction back.
    """
    if reply is None and connection.vendor == "postgresql":
        if connection.in_atomic_block:
            # Part of the caller's transaction: a failure must roll all of it back.
            with transaction.atomic(savepoint=False):
                return _rating_write_postgresql(rater, question, answer, stars, source)
        return _rating_write_postgresql(rater, question, answer, stars, source)
    return _rating_write_orm(rater, question, answer, stars, source, reply, certainty)


@transaction.atomic
def ratings_write(
    *, rater: User, rows: Sequence[RatingRow], source: str, lock: bool = True
) -> RatingsWritten:
    """``rating_write`` for many pairs of one rater: the same rule (``_apply``) in a few bulk statements,
    then the labels of the pairs it created or changed.

    ``lock``: take every pair's lock first, in one fixed order (``_lock_pairs``), so writers of the
    same pairs never deadlock. An import passes False: it may hold more pairs than PostgreSQL's lock
    table (``max_locks_per_transaction`` per connection), and it writes as its own import rater.
    A pair must appear once in ``rows``.
    """
    if lock:
        _lock_pairs((row.question_id, row.answer_id) for row in rows)
    existing = {
        (r.question_id, r.answer_id): r
        for r in Rating.objects.filter(rater=rater, question_id__in={row.question_id for row in rows})
    }
    now = timezone.now()
    created: list[Rating] = []
    updated: list[Rating] = []
    history: list[RatingHistory] = []
    fields: dict[str, None] = {}  # the union of the fields changed, in order
    for row in rows:
        rating = existing.get((row.question_id, row.answer_id))
        if rating is None:
            created.append(
                _new(rater, row.question_id, row.answer_id, row.stars, source, row.reply, row.certainty)
            )
            continue
        changed, kept = _apply(
            rating, stars=row.stars, source=source, reply=row.reply, certainty=row.certainty, now=now
        )
        if kept is not None:
            history.append(kept)
        if changed:
            updated.append(rating)
            fields.update(dict.fromkeys(changed))
    Rating.objects.bulk_create(created, batch_size=1000)
    if updated:
        Rating.objects.bulk_update(updated, list(fields), batch_size=1000)
    RatingHistory.objects.bulk_create(history, batch_size=1000)
    labels_recompute(pairs=[(r.question_id, r.answer_id) for r in [*created, *updated]])
    return RatingsWritten(len(created), len(updated), len(rows) - len(created) - len(updated))


# --- the steps both share --------------------------------------------------------------------------


def _new(
    rater: User,
    question_id: int,
    answer_id: int,
    stars: int,
    source: str,
    reply: str | None,
    certainty: float | None,
) -> Rating:
    """Step 1: a first rating of the pair (not saved yet)."""
    rating = Rating(rater=rater, question_id=question_id, answer_id=answer_id, stars=stars, source=source)
    if reply is not None:
        rating.reply, rating.certainty = reply, certainty
    return rating


def _apply(
    rating: Rating, *, stars: int, source: str, reply: str | None, certainty: float | None, now: datetime
) -> tuple[list[str], RatingHistory | None]:
    """Steps 2–4 on an existing rating, in memory: returns the fields changed (none: leave the row as it
    is) and the history row to keep (when the stars change; not saved yet)."""
    kept = None
    if rating.stars != stars:
        kept = _history_row(rating, new_stars=stars)
    elif reply is None:
        return [], None
    rating.stars, rating.source, rating.updated_at = stars, source, now
    changed = ["stars", "source", "updated_at"]
    if reply is not None:
        rating.reply, rating.certainty = reply, certainty
        changed += ["reply", "certainty"]
    return changed, kept


def _history_row(rating: Rating, *, new_stars: int) -> RatingHistory:
    """The rating's state before a change (stars, source and note: what undo restores), not saved yet."""
    return RatingHistory(
        rating=rating,
        previous_stars=rating.stars,
        previous_source=rating.source,
        previous_note=rating.note,
        new_stars=new_stars,
    )


# --- one rating through the ORM (any database; on PostgreSQL, a judge's) ---------------------------


@transaction.atomic
def _rating_write_orm(
    rater: User,
    question: Question,
    answer: Answer,
    stars: int,
    source: str,
    reply: str | None = None,
    certainty: float | None = None,
) -> Rating:
    _lock_pair(question.pk, answer.pk)
    rating = Rating.objects.filter(rater=rater, question=question, answer=answer).first()
    if rating is None:
        rating = _new(rater, question.pk, answer.pk, stars, source, reply, certainty)
        rating.save(force_insert=True)
    else:
        changed, kept = _apply(
            rating, stars=stars, source=source, reply=reply, certainty=certainty, now=timezone.now()
        )
        if kept is not None:
            kept.save()
        if changed:
            rating.save(update_fields=changed)
    rating.rater, rating.question, rating.answer = rater, question, answer
    label = _labels_write_python({(question.pk, answer.pk)}).get((question.pk, answer.pk))
    rating.saved_label = (label.gain, label.rater_count) if label else None
    return rating


# --- one person's rating on PostgreSQL: the hot path ------------------------------------------------


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
    """``_apply``'s rule for a write without a reply, in SQL: insert the rating, or update it and keep its
    history row if the stars changed; the row as it now is.
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


def _rating_write_postgresql(
    rater: User, question: Question, answer: Answer, stars: int, source: str
) -> Rating:
    """``_rating_write_orm`` for a person's write (no reply), as three statements sent in one query string:
    a rating save is the hot path and each round trip through the ORM and the driver costs more CPU than
    the statement itself.

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
                *(rater.pk, question.pk, answer.pk, stars, source, now),
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
