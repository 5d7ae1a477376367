"""Rows an expensive set-up writes, made once a run and put back for each test that needs them (PostgreSQL).

A ``Snapshot`` runs its ``build`` once a run, in a transaction it rolls back, with the tables' id sequences
moved to its own ``base`` (ids ``base`` to ``base + SPAN``, which no test reaches otherwise), and keeps the
rows the build wrote as PostgreSQL's COPY text. ``restore`` puts them back with COPY (the demo: 0.33 s where
its load took 1.0 s): the same rows with the same ids, so whatever refers to them (foreign keys, ids in JSON
fields, files named by a collection's id) holds; their timestamps moved on by the time since the build, so
they are as new as if written now; and each table's sequence moved past them, so the rows the test writes
next come after them, as after the build itself. The restored rows are the test's own: committed with a
transactional test (which a worker process then sees) and flushed after it, rolled back with a ``db`` one.

The build runs in the first xdist worker that needs it; the others read its rows from the run's base
temporary directory (written once, under a file lock). A build must start from what it finds absent
(``ready``: e.g. no collection with its slug), write rows only (no update of a row that was there, which
``take`` refuses by counting), and have no effect outside the database but what it does on commit, which
``restore`` repeats: a collection's change announced, a job's task sent (jobs), and what ``after`` does
(e.g. the demo's import queues its index build), checked by name. Where ``ready`` is false, or on SQLite,
``restore`` runs the build itself.
"""

from __future__ import annotations

import fcntl
import os
import pickle
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from jobs import collection_state_announce, enqueue_after_commit
from ratings.models import LabelChange

# Each snapshot's ids: base to base + SPAN (ids are int4 in Django's own tables: under 2**31).
SPAN = 10_000_000
# The on-commit callbacks of jobs.collection_state_announce and jobs.enqueue_after_commit, by name:
# ``restore`` repeats them (with their collection, their task and its arguments).
ANNOUNCE = "collection_state_announce.<locals>.send"
ENQUEUE = "enqueue_after_commit.<locals>.send"
# Columns holding the id of the transaction that wrote the row (``LabelChange.mark``: readers find what
# changed since the oldest transaction they saw running): the restoring transaction's.
TRANSACTION_MARKS = {LabelChange._meta.db_table: "mark"}


class _Rollback(Exception):
    pass


@dataclass
class Rows:
    """What a build wrote: per table, its id column, its sequence (none where the id is another table's,
    e.g. a one-to-one key), timestamp columns and rows (COPY text)."""

    base: int
    taken: datetime
    result: Any  # what names the build's result (its ``key``)
    # The on_commit callbacks the build registered (dropped with its transaction), by name, with the
    # arguments of ANNOUNCE's and ENQUEUE's.
    callbacks: list[tuple[str, dict[str, Any]]]
    tables: list[tuple[str, str, str | None, list[str], bytes]] = field(default_factory=list)


def _quote(name: str) -> str:
    return connection.ops.quote_name(name)


def _sequences() -> dict[str, tuple[str, str]]:
    """Each table's id column and its sequence."""
    return {
        s["table"]: (s["column"], s["name"])
        for s in connection.introspection.sequence_list()
        if s.get("name")
    }


def _counts(cursor, tables: list[str]) -> dict[str, int]:
    cursor.execute(" UNION ALL ".join(f"SELECT '{t}', count(*) FROM {_quote(t)}" for t in tables))
    return dict(cursor.fetchall())


def _named(callback: Callable, robust: bool) -> tuple[str, dict[str, Any]]:
    cells = dict(zip(callback.__code__.co_freevars, callback.__closure__ or (), strict=True))
    if callback.__qualname__ == ANNOUNCE:
        return ANNOUNCE, {"collection_id": cells["collection_id"].cell_contents}
    if callback.__qualname__ == ENQUEUE:
        task, kwargs = cells["task"].cell_contents, dict(cells["kwargs"].cell_contents)
        return ENQUEUE, {"task": task, "kwargs": kwargs, "robust": robust}
    return callback.__qualname__, {}


def _repeat(name: str, arguments: dict[str, Any]) -> None:
    if name == ANNOUNCE:
        collection_state_announce(**arguments)
    elif name == ENQUEUE:
        enqueue_after_commit(arguments["task"], kwargs=arguments["kwargs"], robust=arguments["robust"])


def take(build: Callable[[], Any], *, base: int, key: Callable[[Any], Any]) -> Rows:
    """Run ``build`` in a transaction that is rolled back, its new rows' ids from ``base``; its rows, and
    ``key`` of its result."""
    sequences = _sequences()
    tables = connection.introspection.django_table_names(only_existing=True, include_views=False)
    with connection.cursor() as cursor:
        saved = {}
        for _, sequence in sequences.values():
            cursor.execute(f"SELECT last_value, is_called FROM {_quote(sequence)}")
            saved[sequence] = cursor.fetchone()
        rows = Rows(base=base, taken=timezone.now(), result=None, callbacks=[])
        try:
            with transaction.atomic():
                before = _counts(cursor, tables)
                for _, sequence in sequences.values():
                    cursor.execute("SELECT setval(%s, %s, false)", [sequence, base])
                rows.taken = timezone.now()
                registered = len(connection.run_on_commit)
                rows.result = key(build())
                rows.callbacks = [_named(f, robust) for _, f, robust in connection.run_on_commit[registered:]]
                after = _counts(cursor, tables)
                for table in tables:
                    added = after[table] - before[table]
                    if added == 0:
                        continue
                    if added < 0:
                        raise RuntimeError(f"snapshot: the build changed {table} other than by adding rows")
                    if table in sequences:
                        column, sequence = sequences[table]
                    else:  # keyed by another table's id, also from ``base``: e.g. a one-to-one key
                        column = connection.introspection.get_primary_key_column(cursor, table)
                        sequence = None
                    where = f"{_quote(column)} >= {base} AND {_quote(column)} < {base + SPAN}"
                    cursor.execute(f"SELECT count(*) FROM {_quote(table)} WHERE {where}")
                    if cursor.fetchone()[0] != added:
                        raise RuntimeError(f"snapshot: {table} has rows in the ids {base}+ it did not add")
                    cursor.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
                        "AND table_name = %s AND data_type = 'timestamp with time zone'",
                        [table],
                    )
                    stamps = [name for (name,) in cursor.fetchall()]
                    select = f"SELECT * FROM {_quote(table)} WHERE {where} ORDER BY {_quote(column)}"
                    with cursor.cursor.copy(f"COPY ({select}) TO STDOUT") as copy:
                        data = b"".join(bytes(chunk) for chunk in copy)
                    rows.tables.append((table, column, sequence, stamps, data))
                raise _Rollback
        except _Rollback:
            pass
        finally:
            for sequence, (last_value, is_called) in saved.items():
                cursor.execute("SELECT setval(%s, %s, %s)", [sequence, last_value, is_called])
    return rows


def put_back(rows: Rows) -> None:
    """Write ``rows`` into the tables, their timestamps moved on by the time since they were taken."""
    shift = timezone.now() - rows.taken
    with transaction.atomic(), connection.cursor() as cursor:
        for table, column, sequence, stamps, data in rows.tables:
            with cursor.cursor.copy(f"COPY {_quote(table)} FROM STDIN") as copy:
                copy.write(data)
            where = f"{_quote(column)} >= {rows.base} AND {_quote(column)} < {rows.base + SPAN}"
            changes = [f"{_quote(s)} = {_quote(s)} + %s" for s in stamps]
            if table in TRANSACTION_MARKS:
                changes.append(f"{_quote(TRANSACTION_MARKS[table])} = pg_current_xact_id()::text::bigint")
            if changes:
                cursor.execute(
                    f"UPDATE {_quote(table)} SET {', '.join(changes)} WHERE {where}", [shift] * len(stamps)
                )
            if sequence is None:
                continue
            cursor.execute(
                f"SELECT setval(%s, GREATEST((SELECT max({_quote(column)}) FROM {_quote(table)} WHERE {where}), "
                f"(SELECT last_value FROM {_quote(sequence)})))",
                [sequence],
            )


@dataclass
class Snapshot:
    """One set-up's rows (see the module's docstring): ``restore`` returns the build's result."""

    name: str
    base: int
    build: Callable[[], Any]
    ready: Callable[[], bool]
    load: Callable[[Any], Any]  # the build's result from its key
    directory: Path  # where the run's workers share the rows
    key: Callable[[Any], Any] = lambda result: result.pk
    # What the build does on commit other than ANNOUNCE and ENQUEUE (``restore`` repeats those), by name,
    # which ``after`` repeats (``take`` drops it with the rows).
    callbacks: tuple[str, ...] = ()
    after: Callable[[Any], None] = lambda result: None
    rows: Rows | None = None

    def restore(self) -> Any:
        if connection.vendor != "postgresql" or not self.ready():
            return self.build()
        if self.rows is None:
            self.rows = self._shared()
            others = tuple(name for name, _ in self.rows.callbacks if name not in (ANNOUNCE, ENQUEUE))
            if others != self.callbacks:
                raise RuntimeError(f"snapshot {self.name}: the build does {self.rows.callbacks} on commit")
        put_back(self.rows)
        result = self.load(self.rows.result)
        for name, arguments in self.rows.callbacks:
            _repeat(name, arguments)
        self.after(result)
        return result

    def _shared(self) -> Rows:
        self.directory.mkdir(parents=True, exist_ok=True)
        path = self.directory / f"{self.name}.pickle"
        with (self.directory / f"{self.name}.lock").open("w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if path.exists():
                return pickle.loads(path.read_bytes())
            rows = take(self.build, base=self.base, key=self.key)
            partial = path.with_suffix(f".{os.getpid()}")
            partial.write_bytes(pickle.dumps(rows))
            partial.rename(path)
            return rows
