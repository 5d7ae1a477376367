"""Shared fixtures: users with roles, the Cranfield demo collection, and a real Celery worker process."""

from __future__ import annotations

import gc
import json
import os
import re
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import connection, connections, transaction

from config.celery import app as celery_app
from corpus.models import Collection, Role
from corpus.services import collection_create, membership_set

# The real OpenSearch and Solr nodes, once per session: the rankers' tests' and bench_loop's (see GROUPS).
pytest_plugins = ("tests.rankers.real_engines",)

# The tests' ranker servers listen on 127.0.0.1: allow loopback in the outbound policy, here and in the
# worker processes the tests start (they inherit the environment). Tests of the policy turn it off.
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE", "1")

ROOT = Path(__file__).resolve().parent.parent
DATA = Path(__file__).resolve().parent / "data"
DEMO = ROOT / "trainer" / "demo_data"


# ------------------------------------------------------------------------------ parallel runs (xdist)
#
# `make test` runs the suite in pytest-xdist workers (`-n 2 --dist loadfile`). Each worker has its own
# test database (test_test_gw0, ...: django_db_setup), Redis database and var directory (tests/isolation.py),
# base temporary directory (real engines, logs, MODEL_DIRs) and free ports. `--dist loadfile` keeps each
# test file in one worker, so module-scoped servers (judge_server, ranker_server, the committed
# collections) start once. GROUPS' files go to one worker as one unit, one after the other, so what they
# share starts once a run: the real OpenSearch and Solr nodes (session fixtures of the worker that runs
# them), and the chromium and the Celery worker process (kept while the tests that use them follow one
# another; see "the browser" and celery_worker_process below). The units known to take long are handed
# out first, so that no worker is left with a long one at the end while the other idles: SLOW_FILES, the
# seconds a file took in a 2-worker `make test` on the 2-core machine (others count SECONDS_PER_TEST a test).
SLOW_FILES = {
    "tests/browser/test_every_page.py": 55,
    "tests/api/test_api_schema.py": 48,
    "tests/evaluation/test_tasks.py": 37,
    "tests/evaluation/test_browser_dashboard.py": 34,
    "tests/judges/test_services_judging.py": 28,
    "tests/bench/test_bench_loop.py": 25,
    "tests/trainer/test_learner.py": 25,
    "tests/browser/test_csp.py": 8,
    "tests/rankers/test_export_real_engines.py": 22,
    "tests/rankers/test_export_solr_ltr.py": 15,
    "tests/browser/test_rating_page.py": 21,
    "tests/rankers/test_ranker_server_engine.py": 19,
    "tests/evaluation/test_views.py": 18,
    "tests/trainer/test_make_run.py": 18,
    "tests/rankers/test_real_engine_reranker.py": 17,
    "tests/browser/test_rating_long_items.py": 15,
    "tests/rankers/test_http.py": 13,
    "tests/trainer/test_services_training.py": 12,
    "tests/browser/test_history_chart.py": 11,
    "tests/judges/test_judge_server.py": 10,
    "tests/evaluation/test_services.py": 10,
    "tests/trainer/test_command_train_ranker.py": 9,
    "tests/browser/test_rankers_page.py": 8,
    "tests/browser/test_training_loop.py": 8,
    "tests/judges/test_tasks_judging.py": 8,
    "tests/api/test_api_authz.py": 8,
}
SECONDS_PER_TEST = 0.4
GROUPS = {
    # The files with tests on the real OpenSearch and Solr nodes (tests/rankers/real_engines.py).
    "real engines": (
        "tests/rankers/test_export_real_engines.py",
        "tests/rankers/test_export_solr_ltr.py",
        "tests/rankers/test_ranker_server_engine.py",
        "tests/rankers/test_real_engine_reranker.py",
        "tests/rankers/test_real_opensearch.py",
        "tests/rankers/test_real_solr.py",
        "tests/rankers/test_ubi_import_opensearch.py",
        "tests/bench/test_bench_loop.py",  # bench_loop --engine-url: the session's OpenSearch node
    ),
    # The files with tests in chromium (under tests/browser/, or named test_browser_*.py), in two groups of
    # about the same time (one chromium each); a file in neither goes to the second (see group_of).
    "browser: every page": (
        "tests/browser/test_every_page.py",
        "tests/browser/test_csp.py",
        "tests/browser/test_api_docs_offline.py",
        "tests/browser/test_error_pages.py",
    ),
    "browser": (
        "tests/evaluation/test_browser_dashboard.py",  # and a Celery worker process
        "tests/browser/test_training_loop.py",  # and a Celery worker process
        "tests/browser/test_rating_page.py",
        "tests/browser/test_rating_long_items.py",
        "tests/browser/test_history_chart.py",
        "tests/browser/test_rankers_page.py",
    ),
    # The files whose reference judge and ranker servers are shared (tests.servers.SharedServers: one
    # process for the same options while the tests that use it follow one another).
    "judge servers": (
        "tests/judges/test_services_judging.py",
        "tests/judges/test_judge_server.py",
        "tests/judges/test_api_judges.py",
        "tests/judges/test_views_judges.py",
    ),
    "ranker servers": ("tests/rankers/test_http.py", "tests/rankers/test_ranker_server.py"),
    # The files with tests of a Celery worker process (the celery_worker_process fixture).
    "worker": (
        "tests/evaluation/test_end_to_end.py",
        "tests/evaluation/test_tasks.py",
        "tests/judges/test_tasks_judging.py",
        "tests/raters/test_tasks_candidates.py",
        "tests/trainer/test_command_train_ranker.py",
        "tests/trainer/test_tasks_training.py",
        "tests/trainer/test_worker.py",
    ),
}
_GROUP_OF = {path: name for name, paths in GROUPS.items() for path in paths}


def group_of(path: str) -> str:
    """The scheduling unit of a test file: its group's name, or the file itself."""
    if path in _GROUP_OF:
        return _GROUP_OF[path]
    if path.startswith("tests/browser/") or Path(path).name.startswith("test_browser_"):
        return "browser"
    return path


@pytest.hookimpl(tryfirst=True)
# The garbage collector in the test processes. Each holds a large heap for the whole run (Django, hypothesis,
# the test modules), which every full collection walked, and collected its young objects every 700
# allocations. The heap the collection leaves is frozen (it lives to the end anyway) and the young objects
# are collected every 10,000: in the same runs of tests/api, ratings and raters the collector took 2.6 and
# 3.9 CPU-s (4.9-5.2% of the process) against 4.3 and 4.8 (7.5%).
def pytest_configure(config) -> None:
    gc.set_threshold(10_000, 10, 10)


def pytest_collection_finish(session) -> None:
    gc.freeze()


def pytest_xdist_make_scheduler(config, log):
    """`--dist loadfile` with each of GROUPS as one unit, the slowest unit first; other modes as xdist has
    them."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class SlowFilesFirst(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(super()._split_scope(nodeid))

        def _assign_work_unit(self, node) -> None:
            def files(scope: str) -> Counter:
                return Counter(nodeid.split("::", 1)[0] for nodeid in self.workqueue[scope])

            def seconds(scope: str) -> float:
                return sum(SLOW_FILES.get(path, SECONDS_PER_TEST * n) for path, n in files(scope).items())

            self.workqueue.move_to_end(max(self.workqueue, key=seconds), last=False)
            super()._assign_work_unit(node)

    return SlowFilesFirst(config, log)


# One migrate a run: under xdist on PostgreSQL the first worker to need a database migrates a template,
# test_test (the test database's name outside xdist, which no worker uses), and each worker's test_test_gwN
# is a copy of it (CREATE DATABASE ... TEMPLATE), as Django's own parallel runner does. A worker's migrate
# cost 1.5-2 CPU-s of Python plus PostgreSQL's DDL: `make test` of tests/corpus and tests/ratings (3
# workers) took 3.7 CPU-s less on average over 10 interleaved runs each (the pairs' median difference 3.1).
# This replaces pytest-django's django_db_setup there (its --reuse-db, --create-db and --nomigrations do
# not apply; no database is serialized for serialized_rollback, which no test uses).
if os.environ.get("PYTEST_XDIST_WORKER") and connection.vendor == "postgresql":

    @pytest.fixture(scope="session")
    def django_db_setup(request, django_test_environment, django_db_blocker) -> Iterator[None]:
        from django.test.utils import teardown_databases

        worker, run = os.environ["PYTEST_XDIST_WORKER"], os.environ["PYTEST_XDIST_TESTRUNUID"]
        verbosity, creation = request.config.option.verbose, connection.creation
        old_name, template = connection.settings_dict["NAME"], creation._get_test_db_name()
        with django_db_blocker.unblock():
            # The workers take turns on a session lock (a worker that dies releases it with its connection):
            # a template cannot be copied while its migrate is connected to it. The run's id, written as the
            # template's comment once migrated, tells this run's complete template from a dead worker's
            # half one or a killed run's.
            with creation._nodb_cursor() as cursor:
                cursor.execute("SELECT pg_advisory_lock(hashtext(%s))", [template])
                cursor.execute(
                    "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
                    [template],
                )
                if cursor.fetchone() != (run,):
                    creation.create_test_db(verbosity=verbosity, autoclobber=True, serialize=False)
                    cursor.execute(f"COMMENT ON DATABASE {connection.ops.quote_name(template)} IS %s", [run])
                connection.settings_dict["NAME"] = template
                creation.clone_test_db(suffix=worker, verbosity=verbosity)
            creation.setup_worker_connection(worker)
        yield
        with django_db_blocker.unblock():
            try:
                teardown_databases([(connection, old_name, True)], verbosity=verbosity)
            except Exception as exc:  # as pytest-django's: a warning
                request.node.warn(
                    pytest.PytestWarning(f"Error when trying to teardown test databases: {exc!r}")
                )


@pytest.hookimpl(trylast=True)  # after pytest-django's, which lifts its block on database access
def pytest_unconfigure(config) -> None:
    """The xdist controller drops its workers' template (they have all stopped by now)."""
    workers = getattr(config.option, "numprocesses", 0) and not hasattr(config, "workerinput")
    if workers and connection.vendor == "postgresql":
        with connection.creation._nodb_cursor() as cursor:
            name = connection.ops.quote_name(connection.creation._get_test_db_name())
            cursor.execute(f"DROP DATABASE IF EXISTS {name}")


# Tests that start other processes or servers get the `subprocess` mark (`make test-fast` leaves them
# out): those using one of these fixtures, every test of a file that imports subprocess itself or a
# helper that does, and the tests of the real engines' group. The files of SLOW_IN_PROCESS (training on or
# importing the Cranfield collection, schemathesis' generated requests: seconds a test) get the `slow`
# mark, which `make test-fast` leaves out too.
PROCESS_FIXTURES = {
    "live_server",
    "celery_worker_process",
    "opensearch",
    "solr",
    "solr_ltr",
    "served",
    "judge_server_factory",
}
SLOW_IN_PROCESS = {
    "tests/trainer/test_learner.py",
    "tests/trainer/test_learner_without_embeddings.py",
    "tests/api/test_api_schema.py",
    "tests/api/test_api_ground_truth.py",
    "tests/trainer/test_services_training.py",
    "tests/trainer/test_export_ground_truth.py",
}
# The tests of HTML views and of the REST API (files named test_view*.py, test_views*.py, test_api*.py) get
# the `views` mark: half the in-process time, left out of `make test-fast` so it stays under a minute.
VIEW_FILE = re.compile(r"^test_(views?|api)(_|\.py$)")
STARTS_PROCESSES = re.compile(
    r"^\s*(import subprocess|from subprocess |from tests\.trainer\.(gunicorn_support|test_make_run|test_settings) )"
    r"|\bstart_(judge|ranker|engine)_server\b",
    re.MULTILINE,
)


def pytest_collection_modifyitems(config, items) -> None:
    starts: dict[str, bool] = {}
    for item in items:
        path = str(item.path)
        if path not in starts:
            starts[path] = bool(STARTS_PROCESSES.search(item.path.read_text(errors="replace")))
        nodes = group_of(item.nodeid.split("::", 1)[0]) == "real engines"  # fixtures got by parameter name
        if starts[path] or nodes or PROCESS_FIXTURES.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.subprocess)
        if item.nodeid.split("::", 1)[0] in SLOW_IN_PROCESS:
            item.add_marker(pytest.mark.slow)
        if VIEW_FILE.match(item.path.name):
            item.add_marker(pytest.mark.views)


@pytest.fixture(scope="session")
def embeddings_cache(tmp_path_factory) -> Path:
    """One answer-embeddings directory for the whole session, also for the worker processes it starts:
    vectors are reused by text hash, so the Cranfield answers are encoded once per run, not per test.

    Under pytest-xdist the workers of one run share it (the run's base temporary directory): its files
    are written atomically (temporary name, then rename), named by the collection's index fingerprint
    (which differs between workers' databases) and never deleted, and reuse is by text hash."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        path = tmp_path_factory.getbasetemp() / "embeddings"
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
    """The embeddings directory, with the Cranfield demo's answer vectors in it: the ones the demo ships
    (trainer/demo_vectors.py), where every build and engine reranker of this run, worker processes and
    servers included, finds them by text hash instead of encoding 1,400 answers (a minute of both cores)."""
    from trainer.demo_vectors import demo_vectors_seed

    demo_vectors_seed(root=embeddings_cache)
    return embeddings_cache


@pytest.fixture(scope="session")
def snapshots_dir(tmp_path_factory) -> Path:
    """Where the run's workers share the rows of tests/snapshots.py (the run's base temporary directory)."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return tmp_path_factory.getbasetemp() / "snapshots"
    return tmp_path_factory.getbasetemp().parent / "snapshots"


@pytest.fixture(scope="session")
def demo_load(snapshots_dir) -> Callable[[], Collection | None]:
    """``demo_collection_load()`` for tests: the Cranfield demo (slug ``cranfield``) loaded now, as that
    function loads it, in a third of the time (0.33 s and 0.13 CPU-s against 1.0 s and 0.35 CPU-s of the
    load, PostgreSQL's included, on the busy 2-core machine). Its rows are made once a run and copied in
    (tests/snapshots.py): the same ids, timestamps as of now, the index build it queues on commit; committed
    with a transactional test, rolled back with a ``db`` one, as the load's would be. Where the demo or its
    import rater exists already (or on SQLite), ``demo_collection_load`` itself runs."""
    from tests.snapshots import SPAN, Snapshot
    from trainer.services import demo_collection_load
    from trainer.services.imports import IMPORT_RATER_DEFAULT, _index_build_soon

    def ready() -> bool:
        users = get_user_model().objects.filter(username=IMPORT_RATER_DEFAULT)
        return not Collection.objects.filter(slug="cranfield").exists() and not users.exists()

    def queue_index_build(collection: Collection) -> None:
        transaction.on_commit(lambda: _index_build_soon(collection_id=collection.pk))

    snapshot = Snapshot(
        name="demo-cranfield",
        base=SPAN,
        build=demo_collection_load,
        ready=ready,
        load=lambda pk: Collection.objects.get(pk=pk),
        directory=snapshots_dir,
        callbacks=("collection_import.<locals>.<lambda>",),
        after=queue_index_build,
    )
    return snapshot.restore


@pytest.fixture(autouse=True)
def outbound_allow_private(settings):
    """As ``make run``: rankers on 127.0.0.1 (the tests' servers) may be called."""
    settings.OUTBOUND_ALLOW_PRIVATE = True


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """Tests create many users; the production hasher (PBKDF2) costs about 0.3 s per password."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def user_make(username: str, *, collection: Collection | None = None, role: str | None = None, **extra):
    """A user with password ``pw-<username>``, a member of ``collection`` in ``role`` when given."""
    user = get_user_model().objects.create_user(username=username, password="pw-" + username, **extra)
    if collection is not None and role is not None:
        membership_set(collection=collection, user=user, role=role)
    return user


@pytest.fixture
def make_user(db):
    return user_make


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


# ------------------------------------------------------------------------------------------ the browser
#
# Browser tests drive Debian's chromium with Playwright's sync API, whose event loop runs in this thread
# while it is started: Django's async-safety check would refuse the ORM calls the tests make between
# browser steps (hence DJANGO_ALLOW_ASYNC_UNSAFE), and nothing else in the thread could use asyncio. So one
# chromium serves all the browser tests that run one after the other (the scheduler hands them to one
# worker as one unit, see GROUPS: one chromium a run), and it is stopped after the last of them, before a
# test without a browser runs.
# The chromium is Debian's headless shell (package chromium-headless-shell, the same Blink and V8 as its
# chromium, what Playwright itself runs headless), not the whole browser in its headless mode: that one
# opens a window with the browser's own WebUI pages (a renderer more for each context) and runs its UI
# for every context. The same pages, layouts and axe results, 45% less CPU: the browser tests' chromium
# took 102 CPU-s instead of 188 in 102 processes instead of 228, tests/browser/test_every_page.py 47 instead of 72.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
CHROMIUM = "/usr/bin/chromium-headless-shell"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
BROWSER_FIXTURES = {"browser", "chromium"}


class SharedBrowser:
    """Playwright and one chromium, started when a test first asks for them, stopped by ``stop``."""

    def __init__(self) -> None:
        self.playwright = None
        self.browser = None

    def get(self):
        if self.browser is None:
            from playwright.sync_api import sync_playwright

            self.playwright = sync_playwright().start()
            self.browser = self.playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        return self.browser

    def stop(self) -> None:
        if self.playwright is None:
            return
        try:
            if self.browser is not None:
                self.browser.close()
        finally:
            self.playwright.stop()
            self.playwright = self.browser = None
            # ORM calls made while Playwright's loop ran had connections of their own (Django keeps them
            # per async context): close them, or the test database could not be dropped at the end.
            connections.close_all()


_shared_browser = SharedBrowser()


@pytest.fixture(scope="session")
def shared_processes_stopped_at_end(django_db_setup) -> Iterator[None]:
    """Stops the chromium and the Celery worker, if running, before the test database is dropped at the
    end (both had connections to it; usually they stopped after their last test already)."""
    yield
    _stop_session_worker()
    _shared_browser.stop()


@pytest.fixture
def browser(shared_processes_stopped_at_end) -> Iterator[object]:
    """The run's chromium; the contexts (and pages) a test opens are closed after it, so none of its pages
    keeps polling the live server during the next test."""
    browser = _shared_browser.get()
    yield browser
    for context in list(browser.contexts):
        context.close()


def celery_worker_command(*options: str) -> list[str]:
    """`celery worker` for the tests: quiet on the network (no gossip, mingle or heartbeat), INFO log, and
    the settings of the test running now before each task (tests/worker_settings.py)."""
    return [
        sys.executable, "-m", "celery", "-A", "config", "worker", *options, "--loglevel", "INFO",
        "--without-gossip", "--without-mingle", "--without-heartbeat", "--include", "tests.worker_settings",
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
    # Where this test's part of the log begins (the session's worker serves several tests).
    log_from: int = 0

    @property
    def name(self) -> str:
        return self.node or f"{self.queue}@localhost"

    def start(self) -> None:
        # On a restart the log already holds the first start's "ready."; only look past it.
        offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                celery_worker_command(
                    "-Q", self.queue, "-n", self.name, "--pool", "threads", "--concurrency", "4"
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

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

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
        with self.log_path.open("rb") as log:
            log.seek(self.log_from)
            return log.read().decode(errors="replace")[-5000:]

    def idle(self, timeout: float = 30) -> bool:
        """Whether the worker finished the tasks it had (asked over Celery's remote control) within
        ``timeout`` seconds, its queue purged of the rest."""
        from kombu import Connection

        inspect = celery_app.control.inspect(destination=[self.name], timeout=5)
        deadline = time.monotonic() + timeout
        with Connection(settings.CELERY_BROKER_URL) as broker:
            while time.monotonic() < deadline and self.running:
                broker.default_channel.queue_purge(self.queue)
                active, reserved = inspect.active() or {}, inspect.reserved() or {}
                if active.get(self.name) == [] and reserved.get(self.name) == []:
                    return True
                time.sleep(0.1)
        return False


def _database_url_for_tests() -> str:
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{db['NAME']}"
    password = f":{db['PASSWORD']}" if db["PASSWORD"] else ""
    return f"postgres://{db['USER']}{password}@{db['HOST'] or 'localhost'}:{db['PORT'] or 5432}/{db['NAME']}"


# The Celery worker: one process for the tests that need one, one after the other (GROUPS hands their files
# to one xdist worker as one unit); stopped after the last of them, so it never runs beside a test that
# does not expect it (its watchdog takes over stale jobs). Each test gets it idle, its queue empty, with
# the test's environment: a test whose environment differs (other than MODEL_DIR, which the worker takes
# from the test before each task, see tests/worker_settings.py) gets a new process, as does the test after
# one that killed it.
WORKER_FIXTURE = "celery_worker_process"
# Environment the worker takes from the running test without restarting (and pytest's own, per test).
FOLLOWED_ENV = {"MODEL_DIR", "CELERY_QUEUE", "PYTEST_CURRENT_TEST"}
_session_worker: WorkerProcess | None = None


def _stop_session_worker() -> None:
    global _session_worker
    if _session_worker is not None:
        _session_worker.stop()
        _session_worker = None


@pytest.fixture
def celery_worker_process(
    transactional_db, shared_processes_stopped_at_end, tmp_path_factory
) -> Iterator[WorkerProcess]:
    """A real worker process executing the app's tasks against the test database.

    Tests using it see only committed data (transactional_db), as the worker is another process.
    Needs REDIS_URL (make test sets it): the embedded filesystem broker is for `make run`.
    """
    global _session_worker
    if not settings.REDIS_URL:
        pytest.fail("celery_worker_process needs REDIS_URL (run the suite with `make test`)")
    worker_dir = tmp_path_factory.getbasetemp() / "celery-worker"
    worker_dir.mkdir(exist_ok=True)
    test_settings = worker_dir / "settings.json"
    test_settings.write_text(json.dumps({"MODEL_DIR": str(settings.MODEL_DIR)}))
    env = {
        **os.environ,
        "DATABASE_URL": _database_url_for_tests(),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "RANK_TRAINER_TEST_WORKER_SETTINGS": str(test_settings),
    }

    def fixed(environment: dict[str, str]) -> dict[str, str]:
        return {k: v for k, v in environment.items() if k not in FOLLOWED_ENV}

    worker = _session_worker
    if worker is None or not worker.running or fixed(worker.env) != fixed(env):
        _stop_session_worker()
        queue = f"rt-test-{uuid.uuid4().hex[:10]}"
        worker = WorkerProcess(
            queue=queue, env={**env, "CELERY_QUEUE": queue}, log_path=worker_dir / f"{queue}.log"
        )
        worker.start()
        _session_worker = worker
    # The environment a restart (or a replacement) of this test's worker gets: the test's own.
    worker.env = {**env, "CELERY_QUEUE": worker.queue}
    worker.log_from = worker.log_path.stat().st_size
    previous_queue = celery_app.conf.task_default_queue
    celery_app.conf.task_default_queue = worker.queue
    celery_app.amqp.__dict__.pop("queues", None)
    try:
        yield worker
    finally:
        celery_app.conf.task_default_queue = previous_queue
        celery_app.amqp.__dict__.pop("queues", None)
        if worker is _session_worker and worker.running and not worker.idle():
            _stop_session_worker()  # still busy: stopped (a warm shutdown), as a test's own worker was
        elif worker is _session_worker and not worker.running:
            _session_worker = None
        connection.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    yield
    if nextitem is None or not BROWSER_FIXTURES & set(getattr(nextitem, "fixturenames", ())):
        _shared_browser.stop()
    if nextitem is None or WORKER_FIXTURE not in getattr(nextitem, "fixturenames", ()):
        _stop_session_worker()
