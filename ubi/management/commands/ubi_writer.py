"""``manage.py ubi_writer --owner PID``: store a serving process's UBI spool into the database (started by
``ranker_server``; ``ubi.writer`` says how)."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from ubi.writer import writer_run


class Command(BaseCommand):
    help = (
        "Store the UBI spool of process --owner into the database until it exits (started by ranker_server)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--owner", type=int, required=True, help="the serving process's id")
        parser.add_argument("--spool-dir", help="default: UBI_SPOOL_DIR")

    def handle(self, *args: Any, **options: Any) -> None:
        os.nice(10)  # background work: the serving process's requests go first
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the group: the owner says when
        writer_run(
            directory=Path(options["spool_dir"] or settings.UBI_SPOOL_DIR), owner=options["owner"], stop=stop
        )
