"""What one test process owns, set in the environment before Django's settings are read.

Loaded with ``-p tests.isolation`` (pyproject's pytest ``addopts``), so it runs before pytest-django
loads ``config.settings``; everything that process starts (Celery workers, ``ranker_server``,
``judge_server``...) inherits the same environment.

- ``RANK_TRAINER_VAR_DIR``: a fresh directory per test process, removed at its end. ``MODEL_DIR``
  (BM25 indexes, trained models) defaults to ``<var>/models``: test databases number collections and
  rankers from 1, so two processes sharing ``var/models`` (two xdist workers, or two people's runs on
  one checkout) would write the same ``collection-1``/``ranker-1`` files. Tests that need their own
  directory still set ``MODEL_DIR`` or ``RANK_TRAINER_VAR_DIR`` themselves.
- Under pytest-xdist, worker ``gwN`` uses Redis database ``base - N`` (base: the database of
  ``TEST_REDIS_URL``/``REDIS_URL``, 15 by default): the cache, the Celery broker and its results share
  ``REDIS_URL``, and tests clear the cache (``FLUSHDB``), which must not drop another worker's queued
  tasks or throttle counters. Each worker has its own test database
  (``test_test_gw0``, ``test_test_gw1``..., copies of one migrated template: django_db_setup in
  tests/conftest.py); the URLs handed to subprocesses are read from it.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile

_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")


def _worker_redis_url(url: str, worker: str) -> str:
    """``url`` with database ``base - N`` for worker ``gwN`` (redis://host:port/DB)."""
    index = int(worker.removeprefix("gw"))
    match = re.fullmatch(r"(rediss?://[^/?#]*)(?:/(\d*))?(\?.*)?", url)
    if match is None:
        raise RuntimeError(f"tests/isolation.py: cannot give xdist worker {worker} a database of {url!r}")
    base = int(match.group(2) or 0)
    if index > base:
        raise RuntimeError(
            f"tests/isolation.py: xdist worker {worker} needs Redis database {base - index} below the "
            f"test database {base} of {url}; run fewer workers (at most {base + 1})"
        )
    return f"{match.group(1)}/{base - index}{match.group(3) or ''}"


def _isolate() -> str:
    var_dir = tempfile.mkdtemp(prefix=f"rank-trainer-tests-{_WORKER or 'main'}-")
    os.environ["RANK_TRAINER_VAR_DIR"] = var_dir
    if _WORKER:
        # The base is TEST_REDIS_URL when set (bin/test_services sets it and REDIS_URL alike).
        base_url = os.environ.get("TEST_REDIS_URL") or os.environ.get("REDIS_URL", "")
        if base_url:
            os.environ["REDIS_URL"] = _worker_redis_url(base_url, _WORKER)
    return var_dir


_VAR_DIR = _isolate()


def pytest_unconfigure(config) -> None:
    shutil.rmtree(_VAR_DIR, ignore_errors=True)
