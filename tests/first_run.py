"""A fresh clone's first run: one xdist worker compiles the bytecode while the others wait for it.

A fresh clone has no bytecode (``make install`` compiles none, see the Makefile), and xdist starts its
workers at once: each would compile the same modules (Django's, numpy's, the tests' with pytest's assert
rewriting) at the same time, three times over. So when a run starts without the tests' bytecode, the
workers other than ``gw0`` wait here, at their first import (``-p tests.first_run``, before Django and the
tests load), until ``gw0`` has collected the tests (at most ``WAIT_SECONDS``), then read what it wrote.
Later runs find the bytecode and nobody waits.

Measured on a fresh clone's venv and tests, ``make test`` with ``-k`` selecting nothing (2 cores): all three
compiling, 40 CPU-s and 25.6 s; this way, 33 CPU-s and 26.3 s. In ``.ci/run`` the core ``gw0`` leaves
free runs ``make lint``'s mypy, so the 7 CPU-s are about 3.5 s of the run.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
COLLECTED = "RANK_TRAINER_TESTS_COLLECTED"  # the file gw0 writes once it has collected (a first run only)
WAIT_SECONDS = 120
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def _bytecode_cold() -> bool:
    """No bytecode of tests/conftest.py (every run loads it) with pytest's assert rewriting."""
    return not any((ROOT / "tests" / "__pycache__").glob("conftest.*pytest*.pyc"))


if not _WORKER and _bytecode_cold():
    # The workers inherit the environment of this, the controlling process.
    os.environ[COLLECTED] = os.path.join(tempfile.gettempdir(), f"rank-trainer-collected-{os.getpid()}")
elif _WORKER not in ("", "gw0") and os.environ.get(COLLECTED):
    deadline = time.monotonic() + WAIT_SECONDS
    while not os.path.exists(os.environ[COLLECTED]) and time.monotonic() < deadline:
        time.sleep(0.1)


def pytest_collection_finish(session) -> None:
    if _WORKER == "gw0" and os.environ.get(COLLECTED):
        Path(os.environ[COLLECTED]).touch()


def pytest_unconfigure(config) -> None:
    if not _WORKER and os.environ.get(COLLECTED):
        Path(os.environ[COLLECTED]).unlink(missing_ok=True)
