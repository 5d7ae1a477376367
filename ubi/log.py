"""A serving process's UBI log (``ranker_server``): each answered query and each accepted event goes to
the spool in the request thread (microseconds, no database), and the writer process (``ubi.writer``)
stores them in batches.

``UbiLog.start()`` opens this process's spool and forks the writer, which first replays what earlier
processes left; ``stop()`` lets the spool go and waits for the writer's last pass (a ``ranker_server``
stopping with SIGTERM or Ctrl-C). A writer that dies is started again (``manage.py ubi_writer``).
"""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import OrderedDict
from contextlib import suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings

from ubi.records import MAX_ID_CHARS, RecordError, event_record, events_check, format_timestamp
from ubi.services import user_id_kept
from ubi.spool import Spool
from ubi.writer import writer_fork, writer_status

logger = logging.getLogger(__name__)

# Sent by the app's own calls to an http ranker (evaluations, trainings, the queue's candidates): they are
# not production traffic, so ranker_server neither logs nor interleaves them (they would count as
# impressions of an online test and as logged queries of every question).
APP_TRAFFIC_HEADER = "X-Rank-Trainer-Traffic"
RECENT_QUERY_IDS = 200_000  # remembered to count orphan events without asking the database


def _running(pid: int) -> bool:
    try:
        return os.waitpid(pid, os.WNOHANG) == (0, 0)
    except ChildProcessError:  # reaped (by the watch thread)
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def query_id_new() -> str:
    return str(uuid.uuid4())


def caller_ids(payload: Any) -> dict[str, str]:
    """The UBI ids a rank request may carry (``query_id``, ``client_id``, ``user_id``), checked; RecordError
    naming the field that is wrong."""
    ids: dict[str, str] = {}
    if not isinstance(payload, dict):
        return ids
    for name in ("query_id", "client_id", "user_id"):
        value = payload.get(name)
        if value is None:
            continue
        if isinstance(value, bool) or not isinstance(value, str | int) or not str(value).strip():
            raise RecordError(name, "must be a non-empty string")
        if len(str(value)) > MAX_ID_CHARS:
            raise RecordError(name, f"is longer than {MAX_ID_CHARS} characters")
        ids[name] = str(value)
    return ids


class UbiLog:
    def __init__(self, *, directory: Path, application: str, fsync: bool = False) -> None:
        self.directory = directory
        self.application = application
        self.fsync = fsync
        self.recent: OrderedDict[str, None] = OrderedDict()
        self.lock = threading.Lock()
        self.queries = self.events = self.orphans = self.not_logged = 0
        self.spool: Spool | None = None
        self.writer_pid = 0
        self.restarted: subprocess.Popen | None = None
        self.stopping = threading.Event()

    def start(self) -> UbiLog:
        """Call with no database connection open and before serving (the writer is forked)."""
        # Forked first: a child holding a copy of the spool file's descriptor would hold its lock too.
        self.writer_pid = writer_fork(self.directory, os.getpid())
        self.spool = Spool(self.directory, fsync=self.fsync)
        threading.Thread(target=self._watch, name="ubi-writer-watch", daemon=True).start()
        return self

    def _watch(self) -> None:
        """Start the writer again if it dies while this process serves."""
        os.waitpid(self.writer_pid, 0)
        while not self.stopping.is_set():
            logger.error("ubi writer exited; starting it again")
            self.restarted = subprocess.Popen(
                [
                    sys.executable,
                    str(settings.BASE_DIR / "manage.py"),
                    "ubi_writer",
                    "--owner",
                    str(os.getpid()),
                    "--spool-dir",
                    str(self.directory),
                ]  # fmt: skip
            )
            self.restarted.wait()

    def stop(self, timeout: float = 15) -> None:
        self.stopping.set()
        if self.spool is not None:
            self.spool.close()
        writer = self.restarted
        with suppress(ProcessLookupError):
            os.kill(writer.pid if writer else self.writer_pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and (
            writer.poll() is None if writer else _running(self.writer_pid)
        ):
            time.sleep(0.05)

    def query_log(
        self,
        *,
        query_id: str,
        user_query: str,
        hit_ids: list[str],
        attributes: dict[str, Any],
        client_id: str = "",
        user_id: str = "",
    ) -> bool:
        """Spool one answered query; False (and counted) if the spool can't be written: the answer
        still goes out, the log says so."""
        record: dict[str, Any] = {
            "application": self.application,
            "query_id": query_id,
            "client_id": client_id,
            "user_query": user_query,
            "query_response_hit_ids": hit_ids,
            "query_attributes": attributes,
            "object_id_field": "id",
            "timestamp": format_timestamp(datetime.now(UTC)),
        }
        if user_id_kept(user_id):
            record["user_id"] = user_id
        assert self.spool is not None
        try:
            self.spool.append([{"query": record}])
        except OSError:
            with self.lock:
                self.not_logged += 1
            return False
        with self.lock:
            self.queries += 1
            self.recent[query_id] = None
            if len(self.recent) > RECENT_QUERY_IDS:
                self.recent.popitem(last=False)
        return True

    def events_accept(self, body: bytes) -> tuple[int, int]:
        """Check every event of the body and spool them all (RecordError: none is; OSError: the spool
        can't be written, none is). Returns (accepted, orphans): orphans name a ``query_id`` this process
        did not answer lately (the database's count, ``ubi.selectors.orphan_events``, is the full one)."""
        events = events_check(body)
        lines = []
        for event in events:
            record = event_record(event)
            record.pop("user_id", None)
            if user_id_kept(event.user_id):
                record["user_id"] = event.user_id
            lines.append({"event": record, "event_id": str(uuid.uuid4())})
        assert self.spool is not None
        self.spool.append(lines)
        with self.lock:
            orphans = sum(1 for e in events if e.query_id and e.query_id not in self.recent)
            self.events += len(events)
            self.orphans += orphans
        return len(events), orphans

    def stats(self) -> dict[str, Any]:
        assert self.spool is not None
        writer = writer_status(self.directory, os.getpid())
        with self.lock:
            return {
                "application": self.application,
                "queries_logged": self.queries,
                "queries_not_logged": self.not_logged,
                "events_accepted": self.events,
                "orphan_events": self.orphans,
                "stored": writer["stored"],
                "spool_pending_bytes": self.spool.pending_bytes(),
                "database_error": writer["database_error"],
            }
