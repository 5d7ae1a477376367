"""Shared fixtures: users with roles, the Cranfield demo collection, and a real Celery worker process."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection

from corpus.models import Collection, Role
from corpus.services import collection_create, membership_set
from trainer.celery import app as celery_app

# The tests' ranker servers listen on 127.0.0.1: allow loopback in the outbound policy, here and in the
# worker processes the tests start (they inherit the environment). Tests of the policy turn it off.
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE", "1")

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
DEMO = ROOT / "trainer" / "demo_data"


@pytest.fixture(scope="session")
def embeddings_cache(tmp_path_factory) -> Path:
    """One answer-embeddings directory for the whole session, also for the worker processes it starts:
    vectors are reused by text hash, so the Cranfield answers are encoded once per run, not per test."""
    path = tmp_path_factory.mktemp("embeddings")
    os.environ["EMBEDDINGS_DIR"] = str(path)
    return path


@pytest.fixture(autouse=True)
def shared_embeddings(settings, embeddings_cache):
    settings.EMBEDDINGS_DIR = embeddings_cache


@pytest.fixture(autouse=True)
def outbound_allow_private(settings):
    """As ``make run``: rankers on 127.0.0.1 (the tests' servers) may be called."""
    settings.OUTBOUND_ALLOW_PRIVATE = True


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Tests create many users; the production hasher (PBKDF2) costs about 0.3 s per password."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture
def make_user(db):
    def make(username: str, *, collection: Collection | None = None, role: str | None = None, **extra):
        user = get_user_model().objects.create_user(username=username, password="pw-" + username, **extra)
        if collection is not None and role is not None:
            membership_set(collection=collection, user=user, role=role)
        return user

    return make


@pytest.fixture
def collection(db) -> Collection:
    return collection_create(name="Tiny", slug="tiny")


@pytest.fixture
def other_collection(db) -> Collection:
    return collection_create(name="Other", slug="other")


@pytest.fixture
def rater(make_user, collection):
    return make_user("rita", collection=collection, role=Role.RATER)


@pytest.fixture
def trainer(make_user, collection):
    return make_user("tom", collection=collection, role=Role.TRAINER)


@pytest.fixture
def outsider(make_user, other_collection):
    return make_user("olga", collection=other_collection, role=Role.TRAINER)


def celery_worker_command(*options: str) -> list[str]:
    """`celery worker` for the tests: quiet on the network (no gossip, mingle or heartbeat), INFO log."""
    return [
        sys.executable, "-m", "celery", "-A", "trainer", "worker", *options, "--loglevel", "INFO",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
    ]  # fmt: skip


@dataclass
class WorkerProcess:
    """A `celery worker` subprocess bound to the test database and a queue of its own."""

    queue: str
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen | None = None
    starts: list[float] = field(default_factory=list)
    # The Celery node name; default "<queue>@localhost". Another name is another machine (a recreated
    # container) serving the same queue.
    node: str = ""

    def start(self) -> None:
        name = self.node or f"{self.queue}@localhost"
        # On a restart the log already holds the first start's "ready."; only look past it.
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                celery_worker_command(
                    "-Q", self.queue, "-n", name, "--pool", "threads", "--concurrency", "4"
                ),
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        self.starts.append(time.monotonic())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"celery worker exited early:\n{self.log()}")
            if b"ready." in self.log_path.read_bytes()[offset:]:
                return
            time.sleep(0.2)
        raise RuntimeError(f"celery worker did not become ready in 60 s:\n{self.log()}")

    def kill(self) -> None:
        """SIGKILL: the worker gets no chance to clean up (tasks stay unacknowledged)."""
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:]


def _database_url_for_tests() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path) -> Iterator[WorkerProcess]:
    """A real worker process executing the app's tasks against the test database.

    Tests using it see only committed data (transactional_db), as the worker is another process.
    Needs REDIS_URL (make test sets it): the embedded filesystem broker is for `make run`.
    """
    if not settings.REDIS_URL:
        pytest.fail("celery_worker_process needs REDIS_URL (run the suite with `make test`)")
    queue = f"rt-test-{uuid.uuid4().hex[:10]}"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url_for_tests(),
        "CELERY_QUEUE": queue,
        "DJANGO_SETTINGS_MODULE": "trainer.settings",
    }
    previous_queue = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = queue
    celery_app.amqp.__dict__.pop("queues", None)
    worker = WorkerProcess(queue=queue, env=env, log_path=tmp_path / "worker.log")
    worker.start()
    try:
        yield worker
    finally:
        worker.stop()
        celery_app.conf.task_default_queue = previous_queue
        celery_app.amqp.__dict__.pop("queues", None)
        connection.close()
