"""The durable buffer between an answered request and the database: an append-only NDJSON file per
process under ``<VAR_DIR>/ubi-spool/``, drained into the database in batches by the writer process
(``ubi.writer``, with ``Drainer``).

Why a file and not Redis or an in-memory queue: a record is accepted once ``append`` has written its line
to the file (one ``write`` to the kernel, a microsecond; the request thread never waits for the database).
From then on it survives the process being killed or restarted (the kernel has the bytes) and any database
outage (the file grows until the database is back), and it costs no other server that could itself be down.
``UBI_SPOOL_FSYNC`` also ``fsync``\\ s before acknowledging, which a power cut needs (2.6 ms p50, 8 ms p99
on this machine's disk: over the 2 ms budget, so off by default; the writer fsyncs what it has read every
drain, so without it a power cut loses at most the last fraction of a second).

Layout: ``<created>-<pid>.ndjson`` holds the lines, ``<same>.ndjson.done`` the byte offset up to which they
are in the database. The owning process holds an exclusive ``flock`` on its file; a file nobody holds
belongs to a process that died (or to one that started a new file past SEGMENT_BYTES), and the next
writer to look (every 0.2 s) takes the lock, drains it and removes it. A crash between a batch's commit and its ``.done`` write replays that batch: rows are
keyed (``query_id``, ``event_id``), so a replay writes nothing twice.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

logger = logging.getLogger(__name__)

SEGMENT_BYTES = 8 * 1024 * 1024  # a drained file past this size is replaced by a new one
READ_BYTES = 1024 * 1024  # at most this much is read and stored per batch


def _read_done(path: Path) -> int:
    try:
        return int(path.read_text().strip() or 0)
    except (FileNotFoundError, ValueError):
        return 0


class Segment:
    """One spool file, locked by this process: appended to, and drained from its ``.done`` offset."""

    def __init__(self, path: Path, fd: int) -> None:
        self.path = path
        self.fd = fd
        self.done_path = Path(f"{path}.done")
        self.done = _read_done(self.done_path)

    @classmethod
    def create(cls, directory: Path) -> Segment:
        path = directory / f"{time.time_ns()}-{os.getpid()}.ndjson"
        fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        return cls(path, fd)

    @classmethod
    def take(cls, path: Path) -> Segment | None:
        """Another process's file, if that process is gone (nobody holds its lock); else None."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND)
        except FileNotFoundError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.stat(path).st_ino != os.fstat(fd).st_ino:
                raise FileNotFoundError  # drained and removed by its owner while we opened it
        except (BlockingIOError, FileNotFoundError):
            os.close(fd)
            return None
        return cls(path, fd)

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def batches(self) -> Iterator[tuple[list[dict[str, Any]], int]]:
        """The records after ``done``, in batches, each with the offset just after it. A line that is not
        JSON (a write cut short by a crash, at the end of a dead process's file) is logged and skipped."""
        offset = self.done
        while True:
            chunk = os.pread(self.fd, READ_BYTES, offset)
            end = chunk.rfind(b"\n") + 1
            if not end:
                if len(chunk) == READ_BYTES:  # one line longer than a batch: read it whole
                    chunk = os.pread(self.fd, self.size() - offset, offset)
                    end = chunk.rfind(b"\n") + 1
                if not end:
                    return
            records = []
            for line in chunk[:end].splitlines():
                if not line.strip():
                    continue
                try:
                    records.append(json.loads(line))
                except (json.JSONDecodeError, UnicodeDecodeError):
                    logger.error("ubi spool %s: skipped a line that is not JSON: %r", self.path, line[:200])
            offset += end
            yield records, offset

    def mark_done(self, offset: int) -> None:
        os.fsync(self.fd)  # what is in the database is on disk too before the offset moves past it
        self.done = offset
        self.done_path.write_text(str(offset))

    def remove(self) -> None:
        """Delete the file (fully drained), then let its lock go."""
        with suppress(FileNotFoundError):
            self.path.unlink()
        with suppress(FileNotFoundError):
            self.done_path.unlink()
        os.close(self.fd)

    def close(self) -> None:
        os.close(self.fd)


class Spool:
    """This process's spool file: ``append`` from any thread. Past SEGMENT_BYTES it starts a new file and
    lets the old one's lock go, so the drainer takes the old one whole and removes it."""

    def __init__(self, directory: Path, *, fsync: bool = False) -> None:
        self.directory = directory
        directory.mkdir(parents=True, exist_ok=True)
        self.fsync = fsync
        self.lock = threading.Lock()
        self.segment = Segment.create(directory)

    def append(self, records: list[dict[str, Any]]) -> None:
        """Write the records as lines, in one ``write``: all of them are in the file, or (OSError) none."""
        data = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in records)
        with self.lock:
            written = os.write(self.segment.fd, data)
            if written != len(data):  # disk full part-way: take the partial lines back out
                os.ftruncate(self.segment.fd, self.segment.size() - written)
                raise OSError(f"spool write cut short ({written} of {len(data)} bytes)")
            if self.fsync:
                os.fsync(self.segment.fd)
            if self.segment.size() >= SEGMENT_BYTES:
                old, self.segment = self.segment, Segment.create(self.directory)
                old.close()

    def pending_bytes(self) -> int:
        """What this process appended that is not in the database yet (its current file)."""
        return self.segment.size() - _read_done(self.segment.done_path)

    def close(self) -> None:
        """Let the file go: the drainer stores what is left of it and removes it."""
        with self.lock:
            self.segment.close()


class Drainer:
    """Stores spool files into the database: the live files of process ``owner`` (read without their
    lock, which the owner holds: only this drainer reads them) and any file whose lock is free (its owner
    rotated it or died): taken, drained, removed. Several drainers may share a directory."""

    def __init__(self, directory: Path, *, owner: int) -> None:
        self.directory = directory
        self.owner_suffix = f"-{owner}.ndjson"
        self.open: dict[Path, Segment] = {}  # the owner's live files, opened without the lock

    def drain(self, store: Callable[[list[dict[str, Any]]], None]) -> int:
        """One pass over the directory; the records stored. ``store`` raising (the database down) leaves
        the rest for the next pass."""
        stored = 0
        for path in sorted(self.directory.glob("*.ndjson")):
            taken = Segment.take(path)
            if taken is not None:
                live = self.open.pop(path, None)
                if live is not None:
                    live.close()
                stored += self._drain(taken, store, whole=True)
            elif path.name.endswith(self.owner_suffix):
                if path not in self.open:
                    self.open[path] = Segment(path, os.open(path, os.O_RDONLY))
                stored += self._drain(self.open[path], store, whole=False)
        return stored

    def _drain(self, segment: Segment, store: Callable[[list[dict[str, Any]]], None], *, whole: bool) -> int:
        stored = 0
        try:
            for records, offset in segment.batches():
                if records:
                    store(records)
                segment.mark_done(offset)
                stored += len(records)
        except BaseException:
            if whole:
                segment.close()
            raise
        if whole:
            if segment.size() > segment.done:
                logger.error(
                    "ubi spool %s: its last %d bytes are a line cut short when its process died; not stored",
                    segment.path.name,
                    segment.size() - segment.done,
                )
            segment.remove()
        return stored

    def close(self) -> None:
        for segment in self.open.values():
            segment.close()
        self.open.clear()
