"""Shared fixtures: users with roles, the Cranfield demo collection, and a real Celery worker process."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection

from config.celery import app as celery_app
from corpus.models import Collection, Role
from corpus.services import collection_create, membership_set

# The tests' ranker servers listen on 127.0.0.1: allow loopback in the outbound policy, here and in the
# worker processes the tests start (they inherit the environment). Tests of the policy turn it off.
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE", "1")

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
DEMO = ROOT / "trainer" / "demo_data"


# ------------------------------------------------------------------------------ parallel runs (xdist)
#
# `make test` runs the suite in pytest-xdist workers (`-n 2 --dist loadfile`). Each worker has its own
# test database (pytest-django: test_test_gw0, ...), Redis database and var directory (tests/isolation.py),
# base temporary directory (real engines, logs, MODEL_DIRs) and free ports. `--dist loadfile` keeps each
# test file in one worker, so module-scoped servers (judge_server, ranker_server, the browser, the
# committed collections) start once, and the real OpenSearch and Solr only in the worker that runs their
# file. The files known to take long are handed out first, so that no worker is left with a long file at
# the end while the other idles: SLOW_FILES, the seconds a file took in a 2-worker run on the 2-core
# machine (roughly; others unlisted count SECONDS_PER_TEST a test).
SLOW_FILES = {
    "tests/trainer/test_learner.py": 300,
    "tests/evaluation/test_end_to_end.py": 200,
    "tests/judges/test_services_judging.py": 110,
    "tests/trainer/test_api_schema.py": 100,
    "tests/browser/test_every_page.py": 65,
    "tests/evaluation/test_tasks.py": 60,
    "tests/evaluation/test_browser_dashboard.py": 55,
    "tests/judges/test_judge_server.py": 37,
    "tests/trainer/test_make_run.py": 36,
    "tests/browser/test_csp.py": 36,
    "tests/evaluation/test_views.py": 35,
    "tests/browser/test_rating_page.py": 34,
    "tests/bench/test_bench_loop.py": 30,
    "tests/rankers/test_http.py": 28,
    "tests/rankers/test_real_solr.py": 25,
    "tests/judges/test_tasks_judging.py": 24,
    "tests/rankers/test_real_opensearch.py": 22,
    "tests/rankers/test_export_real_engines.py": 22,
}
SECONDS_PER_TEST = 0.4
# Files run one after the other in one worker: both encode the 1,400 Cranfield answers with the embedding
# model (a minute of both cores each); side by side they only slow each other down, and the one that runs
# second may reuse the first one's vectors (the embeddings directory is shared, see embeddings_cache).
TOGETHER = {"tests/trainer/test_learner.py": "tests/evaluation/test_end_to_end.py"}


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` with TOGETHER's files as one unit, the slowest unit first; other modes as xdist has
    them."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SlowFilesFirst(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            path = super()._split_scope(nodeid)
            return TOGETHER.get(path, path)

        def _assign_work_unit(self, node) -> None:
            def seconds(scope: str) -> float:
                files = Counter(nodeid.split("::", 1)[0] for nodeid in self.workqueue[scope])
                return sum(SLOW_FILES.get(path, SECONDS_PER_TEST * n) for path, n in files.items())

            self.workqueue.move_to_end(max(self.workqueue, key=seconds), last=False)
            super()._assign_work_unit(node)

    return SlowFilesFirst(config, log)


# Tests that start other processes or servers get the `subprocess` mark (`make test-fast` leaves them
# out): those using one of these fixtures, and every test of a file that imports subprocess itself or a
# helper that does. The files of SLOW_IN_PROCESS (training on or importing the Cranfield collection,
# schemathesis' generated requests: seconds a test) get the `slow` mark, which `make test-fast` leaves out too.
PROCESS_FIXTURES = {
    "live_server",
    "celery_worker_process",
    "opensearch",
    "solr",
    "served",
    "judge_server_factory",
}
SLOW_IN_PROCESS = {
    "tests/trainer/test_learner.py",
    "tests/trainer/test_learner_without_embeddings.py",
    "tests/trainer/test_api_schema.py",
    "tests/trainer/test_api_ground_truth.py",
    "tests/trainer/test_services_training.py",
    "tests/trainer/test_export_ground_truth.py",
}
STARTS_PROCESSES = re.compile(
    r"^\s*(import subprocess|from subprocess |from tests\.trainer\.(gunicorn_support|test_make_run|test_settings) )"
    r"|\bstart_(judge|ranker)_server\b",
    re.MULTILINE,
)


def pytest_collection_modifyitems(config, items) -> None:
    starts: dict[str, bool] = {}
    for item in items:
        path = str(item.path)
        if path not in starts:
            starts[path] = bool(STARTS_PROCESSES.search(item.path.read_text(errors="replace")))
        if starts[path] or PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.subprocess)
        if item.nodeid.split("::", 1)[0] in SLOW_IN_PROCESS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def embeddings_cache(tmp_path_factory) -> Path:
    """One answer-embeddings directory for the whole session, also for the worker processes it starts:
    vectors are reused by text hash, so the Cranfield answers are encoded once per run, not per test.

    Under pytest-xdist the workers of one run share it (the run's base temporary directory): its files
    are written atomically (temporary name, then rename), named by the collection's index fingerprint
    (which differs between workers' databases) and never deleted, and reuse is by text hash."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        path = tmp_path_factory.mktemp("embeddings")
    else:
        path = tmp_path_factory.getbasetemp().parent / "embeddings"
        path.mkdir(exist_ok=True)
    os.environ["EMBEDDINGS_DIR"] = str(path)
    return path


@pytest.fixture(autouse=True)
def shared_embeddings(settings, embeddings_cache):
    settings.EMBEDDINGS_DIR = embeddings_cache


@pytest.fixture(scope="session")
def demo_vectors(embeddings_cache) -> Path:
    """The Cranfield demo's answer vectors, encoded once per run for every test and process of it.

    Training on the demo (a builtin ranker's embeddings build, an engine reranker's candidates) encodes
    its 1,400 answers first: a minute of both cores, and each test's collection is a new one. Here they are
    encoded once, in the first xdist worker that needs them (the other waits on a lock), into the shared
    embeddings directory's one-file-per-text store (``returned/``), where every build and every engine
    reranker of this run, worker processes and servers included, finds them by text hash
    (``rankers.semantic``). They are encoded as a fresh build encodes them (parts of ``PART_SIZE`` in the
    index's order, batches of ``BATCH_SIZE``), so the vectors are the ones the tests would compute."""
    import fcntl

    from django.test import override_settings

    from rankers import semantic
    from rankers.embedding import load_encoder, text_hash
    from trainer.services import DEMO_DATA_DIR, ImportFiles, parse_import_files

    done = embeddings_cache / "demo-answers.done"
    with open(embeddings_cache / "demo-answers.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.exists():
            return embeddings_cache
        answers, _, _ = parse_import_files(ImportFiles(rnr_documents=DEMO_DATA_DIR / "cranfield-data.json"))
        texts = [semantic.answer_text(a.title, a.body) for a in answers]
        encoder = load_encoder()
        with override_settings(EMBEDDINGS_DIR=embeddings_cache):
            for start in range(0, len(texts), semantic.PART_SIZE):
                part = texts[start : start + semantic.PART_SIZE]
                vectors = encoder.encode(part, batch_size=semantic.BATCH_SIZE).astype(np.float32)
                for text, vector in zip(part, vectors, strict=True):
                    semantic._save(semantic._returned_file(text_hash(text)), vector)
        done.touch()
    return embeddings_cache


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
        sys.executable, "-m", "celery", "-A", "config", "worker", *options, "--loglevel", "INFO",
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
            time.sleep(0.05)
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
        "DJANGO_SETTINGS_MODULE": "config.settings",
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
