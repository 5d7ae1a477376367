"""A database made before the apps were split into layers cannot be migrated in place: say so plainly."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, Tags, register
from django.db import connections
from django.db.utils import DatabaseError


@register(Tags.database)
def old_layout_check(app_configs: Any = None, databases: Any = None, **kwargs: Any) -> list[CheckMessage]:
    """The old layout kept collections in ``trainer_collection``; the new one in ``corpus_collection``.

    Runs before ``migrate`` (a database check), so ``make run`` on an old ``var/`` stops with this
    message instead of a traceback halfway through the migrations.
    """
    errors: list[CheckMessage] = []
    for alias in databases or []:
        connection = connections[alias]
        try:
            tables = set(connection.introspection.table_names())
        except DatabaseError:
            continue  # an unreachable database is reported by whatever uses it next
        if "trainer_collection" in tables and "corpus_collection" not in tables:
            name = connection.settings_dict["NAME"]
            errors.append(
                Error(
                    f"The database {name} was made by an older version of Rank Trainer (before the "
                    "corpus/ and rankers/ apps) and cannot be migrated in place.",
                    hint="Export what you need with the old version (manage.py export_ground_truth), then "
                    "start from an empty database: for the embedded one, `mv var var.old && make run`.",
                    id="trainer.E001",
                )
            )
    return errors
