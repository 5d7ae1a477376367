"""Loaded into the tests' Celery worker (``celery worker --include tests.worker_settings``, see
tests/conftest.py): before each task the worker takes the settings of the test running now.

One worker process serves the tests that need one, one after the other; each test has its own MODEL_DIR
(its ``model_dir`` fixture), which the worker would otherwise read once, from its environment, when it
starts. The test writes it to the JSON file named by ``RANK_TRAINER_TEST_WORKER_SETTINGS``; a worker that
changes directory forgets the indexes, models and vectors it holds in memory, as a new process would.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from celery.signals import task_prerun
from django.conf import settings

SETTINGS_FILE = "RANK_TRAINER_TEST_WORKER_SETTINGS"
_lock = threading.Lock()


@task_prerun.connect
def follow_the_test(**kwargs) -> None:
    path = os.environ.get(SETTINGS_FILE)
    if not path:
        return
    try:
        wanted = json.loads(Path(path).read_text())
    except (OSError, ValueError):
        return
    model_dir = wanted.get("MODEL_DIR")
    with _lock:
        if model_dir and Path(model_dir) != Path(settings.MODEL_DIR):
            from rankers.builtin import clear_ranker_caches

            settings.MODEL_DIR = Path(model_dir)
            clear_ranker_caches()
