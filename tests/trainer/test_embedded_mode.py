"""With no DATABASE_URL/REDIS_URL, a real worker process runs tasks sent through the filesystem broker."""

import os
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import celery_worker_command

ROOT = Path(__file__).resolve().parents[2]


def test_embedded_worker_runs_task_sent_by_another_process(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "CELERY_QUEUE"}}
    env.update(DEBUG="1", RANK_TRAINER_VAR_DIR=str(tmp_path), DJANGO_SETTINGS_MODULE="config.settings")
    log = tmp_path / "worker.log"
    with log.open("wb") as out:
        worker = subprocess.Popen(
            celery_worker_command("--pool", "solo"),
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        send = "from trainer.tasks import ping; ping.delay(value='from-the-web-process')"
        subprocess.run(
            [sys.executable, "-c", f"import django; django.setup(); {send}"],
            cwd=ROOT,
            env=env,
            check=True,
            timeout=60,
            capture_output=True,
        )
        deadline = time.monotonic() + 60
        while "succeeded" not in log.read_text() and time.monotonic() < deadline:
            assert worker.poll() is None, log.read_text()
            time.sleep(0.05)
        assert "Connected to filesystem://" in log.read_text()
        assert "No hostname was supplied" not in log.read_text()  # kombu's warning on every start
        assert "'from-the-web-process'" in log.read_text()
        assert (tmp_path / "broker" / "control").is_dir()
    finally:
        worker.terminate()
        worker.wait(20)
