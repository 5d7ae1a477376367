"""`make run`: once the web server and the Celery worker are up, the URL and the demo logins are the last
lines on screen (no Celery banner or warning after them); Ctrl-C (SIGINT to the whole process group, as a
terminal sends it) stops make, the web server and the Celery worker within seconds, with one line."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
STOP_SECONDS = 10


def members(pgids: set[int]) -> dict[int, str]:
    """Live (not zombie) processes whose process group is one of pgids, with their command lines."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        if fields[0] != "Z" and int(fields[2]) in pgids:
            found[int(entry.name)] = command
    return found


def descendants(root: int) -> set[int]:
    """root and every process below it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            children.setdefault(int(stat[stat.rindex(")") + 2 :].split()[1]), []).append(int(entry.name))
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        found.add(pid)
        todo.extend(children.get(pid, []))
    return found


def pgid_of(pid: int) -> int | None:
    try:
        stat = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return None
    return int(stat[stat.rindex(")") + 2 :].split()[2])


@pytest.mark.worker
def test_make_run_ctrl_c_stops_web_server_and_worker(tmp_path):
    port = free_port()
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(RANK_TRAINER_VAR_DIR=str(tmp_path), DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3")
    log_path = tmp_path / "make.log"
    with log_path.open("wb") as log:
        make = subprocess.Popen(
            # -o: never reinstall the venv from here (the test runs in it).
            ["make", "--no-print-directory", "-o", ".venv/.installed", "run", f"PORT={port}"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a process group of its own, as a terminal's foreground job
        )
    try:
        deadline = time.monotonic() + 240
        while "rater login:" not in log_path.read_text():  # bin/run's announcement: both are up
            assert make.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        said = log_path.read_text()
        credentials = json.loads((tmp_path / "demo-credentials.json").read_text())
        assert said.rstrip("\n").splitlines()[-4:] == [
            "",
            f"  Rank Trainer is ready at http://127.0.0.1:{port}/  (Ctrl-C stops it)",
            f"  trainer login: trainer / {credentials['trainer']}",
            f"  rater login:   rater / {credentials['rater']}",
        ], said
        # Said once, at the end: not by bootstrap_demo before the servers' start-up lines too.
        assert said.count(credentials["rater"]) == 1, said
        # No Celery banner or task list, and no SecurityWarning (this suite runs as root in CI).
        assert "[tasks]" not in said and "celery@" not in said and "SecurityWarning" not in said, said
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/login/", timeout=5) as response:
            assert response.status == 200
        # runserver logs a request once it has answered: wait for that line, so that what follows Ctrl-C
        # below is only what stopping prints.
        while '"GET /login/ HTTP/1.1" 200' not in log_path.read_text():
            assert time.monotonic() < deadline, log_path.read_text()
            time.sleep(0.1)
        pids = descendants(make.pid)
        pgids = {make.pid} | {g for g in map(pgid_of, pids) if g is not None}
        running = members(pgids)
        commands = " ".join(running.values())
        assert "runserver" in commands and "celery" in commands, running
        before = log_path.stat().st_size

        os.killpg(make.pid, signal.SIGINT)
        started = time.monotonic()
        while members(pgids) and time.monotonic() - started < STOP_SECONDS:
            time.sleep(0.1)
        elapsed = time.monotonic() - started
        assert members(pgids) == {}, f"still running after {elapsed:.1f} s"
        make.wait(5)
        said = log_path.read_bytes()[before:].decode().strip().splitlines()
        assert len(said) == 1, said
        assert said[0].startswith("Stopped the web server and the Celery worker (")
        print(f"stopped in {elapsed:.1f} s")
    finally:
        if make.poll() is None:
            os.killpg(make.pid, signal.SIGKILL)
        for pid in members(pgids if "pgids" in locals() else {make.pid}):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.worker
def test_bin_run_stops_worker_when_web_server_cannot_start(tmp_path):
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(DEBUG="1", RANK_TRAINER_VAR_DIR=str(tmp_path), DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run(
            [sys.executable, "bin/run", f"127.0.0.1:{port}"],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            start_new_session=True,
        )
    assert result.returncode == 1
    assert "That port is already in use." in result.stdout
    assert result.stderr == "error: the web server exited with code 1; stopped everything.\n"


@pytest.mark.worker
def test_bin_run_shows_the_worker_error_and_no_logins_while_the_broker_is_down(tmp_path):
    # A quiet worker still says what is wrong, and the URL and logins wait for it to be ready.
    keep = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR"}
    env = {k: v for k, v in os.environ.items() if k in keep}
    env.update(
        DEBUG="1",
        RANK_TRAINER_VAR_DIR=str(tmp_path),
        DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3",
        REDIS_URL=f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
    )
    run = subprocess.Popen(
        [sys.executable, "bin/run", f"127.0.0.1:{free_port()}"],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    said: list[str] = []
    refused = threading.Event()

    def read() -> None:
        assert run.stdout is not None
        for line in run.stdout:
            said.append(line)
            if "consumer: Cannot connect to redis://" in line:
                refused.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert refused.wait(60), "".join(said)
        os.killpg(run.pid, signal.SIGINT)
        run.wait(STOP_SECONDS)
        reader.join(5)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    text = "".join(said)
    assert "ERROR/MainProcess] consumer: Cannot connect to redis://" in text, text
    assert "Rank Trainer is ready" not in text, text
    assert said[-1].startswith("Stopped the web server and the Celery worker ("), text
