"""A real gunicorn serving the app in a subprocess, for tests of what runs in the container."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.servers import free_port

ROOT = Path(__file__).resolve().parents[2]
GUNICORN = str(Path(sys.executable).parent / "gunicorn")
# Variables of the test run that must not leak into a "production" process.
TEST_ONLY = {"DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_ALLOW_ASYNC_UNSAFE"}

PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k" * 30 + "-long-random-production-secret-value-123",
    "ALLOWED_HOSTS": "rank.example.com",
    "SECURE_SSL_REDIRECT": "1",
}


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in TEST_ONLY}
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    env.update(extra)
    return env


@contextmanager
def gunicorn(env: dict[str, str], log_path: Path) -> Iterator[int]:
    """gunicorn on a free port; yields the port once it accepts connections."""
    port = free_port()
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [GUNICORN, "config.wsgi:application", "--bind", f"127.0.0.1:{port}", "--workers", "1"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log_path.read_text()
            assert time.monotonic() < deadline, log_path.read_text()
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.05)
        yield port
    finally:
        process.terminate()
        process.wait(20)
