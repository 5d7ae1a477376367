"""The feed of changes to a collection's ratings and labels (``ratings.models.LabelChange``): which
questions changed since a position a reader remembers, and the position to remember now."""

from __future__ import annotations

from django.db import connection

from ratings.models import LabelChange


def label_changes(*, collection_id: int, since: int | None) -> tuple[list[int], int]:
    """(the questions of the collection whose ratings or labels a write changed at or after the position
    ``since``, sorted; the position to pass next time). ``since=None``: no questions, only the position;
    take it before reading the ratings or labels it is to keep up to date.

    One statement, so both parts come from one snapshot. On PostgreSQL the position is that snapshot's
    xmin, the oldest transaction still running: every transaction with a smaller id had ended, so its
    changes were seen, and any later one marks with its own id, at or above the position, however late it
    commits. Elsewhere (SQLite: one writer at a time) it is one more than the collection's highest mark.
    Reads the index on (collection, mark): the rows changed since, not the collection's labels."""
    change = LabelChange._meta.db_table
    postgresql = connection.vendor == "postgresql"
    position = (
        "pg_snapshot_xmin(pg_current_snapshot())::text::bigint"
        if postgresql
        else f"(SELECT coalesce(max(mark), 0) + 1 FROM {change} WHERE collection_id = %s)"
    )
    params: list[int] = [] if postgresql else [collection_id]
    if since is None:
        changed = "NULL"
    elif postgresql:
        changed = f"ARRAY(SELECT question_id FROM {change} WHERE collection_id = %s AND mark >= %s)"
        params += [collection_id, since]
    else:
        changed = f"(SELECT group_concat(question_id) FROM {change} WHERE collection_id = %s AND mark >= %s)"
        params += [collection_id, since]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {position}, {changed}", params)
        now, questions = cursor.fetchone()
    if isinstance(questions, str):
        questions = [int(q) for q in questions.split(",")]
    return sorted(questions or []), int(now)
