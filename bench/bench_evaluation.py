"""Evaluation wall time against `manage.py ranker_server` with 20 ms injected latency, 1 and 2 workers.

Builds a fresh PostgreSQL database (default ``rt_bench_evaluation``) with 1,000 short answers and two
collections of test questions, 1,000 and 10,000 (three labels each), starts ``ranker_server`` (BM25 over
the answers, ``--latency-ms 20``) and real Celery worker processes (``--pool threads --concurrency 1``, so
each worker evaluates one chunk at a time with ``EVALUATION_CONCURRENCY`` requests in flight), and times
``evaluation_start`` → run finished.

The limit is N × latency ÷ (workers × EVALUATION_CONCURRENCY): what the injected latency alone costs
with that many requests in flight. Goal: within 1.5× of it plus the metric time. As a reference measured
in the same run, a plain thread pool client sends the same N requests to the same server with the same
number in flight: the fastest this server and machine answer them, with no evaluation work at all.

    DEBUG=1 REDIS_URL=redis://127.0.0.1:6379/6 .venv/bin/python bench/bench_evaluation.py \\
        [--pg postgres://postgres@127.0.0.1:5432] [--sizes 1000 10000] [--workers 1 2]
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ANSWERS = 1_000
LATENCY_MS = 20  # default of --latency-ms
WORDS = [
    "boundary",
    "layer",
    "flow",
    "shock",
    "wave",
    "supersonic",
    "heat",
    "transfer",
    "flutter",
    "wing",
    "panel",
    "buckling",
    "shell",
    "nozzle",
    "turbulent",
    "laminar",
    "skin",
    "friction",
    "pressure",
    "cone",
    "plate",
    "hypersonic",
    "transonic",
]


def fresh_database(pg: str, name: str) -> str:
    with psycopg.connect(pg.replace("postgres://", "postgresql://") + "/postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{pg}/{name}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def populate(sizes: list[int]) -> dict[int, object]:
    """A collection per size with the same 1,000 answers, `size` test questions and three labels each."""
    from django.db import connection

    from corpus.services import collection_create

    words = "ARRAY[" + ",".join(f"'{w}'" for w in WORDS) + "]"
    n = len(WORDS)
    collections = {}
    for size in sizes:
        collection = collection_create(name=f"Bench {size}", slug=f"bench{size}")
        c = collection.pk
        with connection.cursor() as cursor:
            cursor.execute(f"""
                INSERT INTO trainer_answer (collection_id, external_id, title, body, metadata, created_at, updated_at)
                SELECT {c}, 'a' || i, w[1 + i % {n}] || ' ' || w[1 + (i / {n}) % {n}],
                       w[1 + (i * 7) % {n}] || ' ' || w[1 + (i * 13) % {n}] || ' ' || w[1 + (i * 17) % {n}] || ' ' || i,
                       '{{}}', now(), now()
                FROM generate_series(0, {ANSWERS - 1}) i, (SELECT {words} w) words""")
            cursor.execute(f"""
                INSERT INTO trainer_question (collection_id, external_id, text, split, metadata, created_at, updated_at)
                SELECT {c}, 'q' || i, w[1 + i % {n}] || ' ' || w[1 + (i * 3) % {n}] || ' ' || w[1 + (i * 11) % {n}],
                       'test', '{{}}', now(), now()
                FROM generate_series(0, {size - 1}) i, (SELECT {words} w) words""")
            cursor.execute(f"""
                INSERT INTO ratings_label (question_id, answer_id, gain, rater_count, mean_stars, disagreement,
                                           updated_at)
                SELECT q.id, a.id, 1 + (q.id + j) % 3, 1, 1 + (q.id + j) % 3, 0, now()
                FROM trainer_question q, generate_series(0, 2) j
                JOIN trainer_answer a ON a.collection_id = {c}
                WHERE q.collection_id = {c} AND a.external_id = 'a' || ((j * 37) % {ANSWERS})""")
        collections[size] = collection
    return collections


class Processes:
    def __init__(self, env: dict[str, str], log_dir: Path) -> None:
        self.env, self.log_dir, self.started = env, log_dir, []

    def start(
        self, name: str, args: list[str], ready: bytes, extra_env: dict | None = None
    ) -> subprocess.Popen:
        log_path = self.log_dir / f"{name}.log"
        log = log_path.open("ab")
        process = subprocess.Popen(
            args, cwd=ROOT, env={**self.env, **(extra_env or {})}, stdout=log, stderr=subprocess.STDOUT
        )
        self.started.append(process)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"{name} exited:\n{log_path.read_text()[-3000:]}")
            if ready in log_path.read_bytes():
                return process
            time.sleep(0.1)
        raise RuntimeError(f"{name} not ready:\n{log_path.read_text()[-3000:]}")

    def stop(self, process: subprocess.Popen) -> None:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)

    def stop_all(self) -> None:
        for process in self.started:
            self.stop(process)


def reference_seconds(url: str, questions: list[tuple[str, str]], in_flight: int) -> float:
    """The same requests with the same number in flight from a plain client: server and machine floor."""
    import httpx

    client = httpx.Client(limits=httpx.Limits(max_connections=64, max_keepalive_connections=64), timeout=30)

    def ask(question):
        response = client.post(url, json={"question": {"id": question[0], "text": question[1]}, "rows": 10})
        response.raise_for_status()

    start = time.perf_counter()
    with ThreadPoolExecutor(max_workers=in_flight) as pool:
        list(pool.map(ask, questions))
    elapsed = time.perf_counter() - start
    client.close()
    return elapsed


def metric_seconds(run) -> float:
    """What finalisation computes, timed alone: per-question metrics, bootstrap CI, paired comparison."""
    import numpy as np

    from evaluation.metrics.stats import bootstrap_ci, compare_runs
    from evaluation.models import QuestionResult
    from evaluation.services import score_rankings
    from ratings.selectors import labels_by_question

    rows = list(QuestionResult.objects.filter(run=run).values_list("question_id", "ranked_answer_ids"))
    start = time.perf_counter()
    labels = labels_by_question(question_ids=[q for q, _ in rows])
    scored = score_rankings(run=run, rankings=[r for _, r in rows], labels=[labels[q] for q, _ in rows])
    bootstrap_ci(scored.ndcg, seed=0)
    compare_runs(scored.ndcg, np.roll(scored.ndcg, 1), seed=0)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432", help="PostgreSQL server URL")
    parser.add_argument("--database", default="rt_bench_evaluation")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--latency-ms", type=int, default=LATENCY_MS, help="latency ranker_server injects")
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--concurrency", type=int, default=16, help="EVALUATION_CONCURRENCY of each worker")
    parser.add_argument("--chunk-size", type=int, default=250, help="EVALUATION_CHUNK_SIZE")
    parser.add_argument(
        "--chunks-per-worker",
        type=int,
        default=2,
        help="celery --concurrency: chunks a worker works on at once",
    )
    args = parser.parse_args()
    if not os.environ.get("REDIS_URL"):
        sys.exit("REDIS_URL is required (the workers need a broker), e.g. redis://127.0.0.1:6379/6")

    tmp = Path(tempfile.mkdtemp(prefix="rt-bench-eval-"))
    queue = f"rt-bench-{uuid.uuid4().hex[:8]}"
    env = {
        **os.environ,
        "DATABASE_URL": fresh_database(args.pg, args.database),
        "DEBUG": os.environ.get("DEBUG", "1"),
        "SECRET_KEY": os.environ.get("SECRET_KEY", "bench"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "MODEL_DIR": str(tmp / "models"),
        "CELERY_QUEUE": queue,
        "EVALUATION_CONCURRENCY": str(args.concurrency),
        "EVALUATION_CHUNK_SIZE": str(args.chunk_size),
        "LOG_LEVEL": "WARNING",
        # The benchmark's ranker_server listens on 127.0.0.1 (the outbound policy refuses loopback by default).
        "OUTBOUND_ALLOW_PRIVATE": os.environ.get("OUTBOUND_ALLOW_PRIVATE", "1"),
    }
    os.environ.update(env)
    import django

    django.setup()
    from django.core.management import call_command

    from corpus.models import Question
    from evaluation.models import RunTrigger
    from evaluation.services import evaluation_start
    from rankers.models import Ranker, RankerKind

    call_command("migrate", verbosity=0)
    print(
        f"Populating {args.database} (1,000 answers; {', '.join(f'{s:,}' for s in args.sizes)} test questions) ..."
    )
    collections = populate(args.sizes)
    processes = Processes(env, tmp)
    port = free_port()
    biggest = max(args.sizes)
    processes.start(
        "ranker_server",
        [
            sys.executable,
            "manage.py",
            "ranker_server",
            "--collection",
            f"bench{biggest}",
            "--port",
            str(port),
            "--latency-ms",
            str(args.latency_ms),
        ],
        ready=b"ranker_server: ",
        extra_env={"LOG_LEVEL": "INFO"},
    )
    url = f"http://127.0.0.1:{port}/"
    for _ in range(100):
        try:
            import httpx

            if httpx.get(url + "healthz", timeout=1).status_code == 200:
                break
        except httpx.TransportError:
            time.sleep(0.2)
    rankers = {
        size: Ranker.objects.create(
            collection=c,
            name="Service",
            kind=RankerKind.HTTP,
            config={"url": url, "timeout": 30, "retries": 2},
        )
        for size, c in collections.items()
    }
    print(
        f"ranker_server on {url} with {args.latency_ms} ms latency; workers: threads pool, {args.chunks_per_worker} "
        f"chunks at a time sharing {args.concurrency} requests in flight per worker; chunks of {args.chunk_size}\n"
    )
    print(
        "| test questions | workers | in flight | limit N×latency÷in flight | plain client (same server) "
        "| evaluation wall | ÷ limit | ÷ plain client | metric time |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    try:
        for workers in args.workers:
            started = [
                processes.start(
                    f"worker-{workers}-{i}",
                    [
                        sys.executable,
                        "-m",
                        "celery",
                        "-A",
                        "config",
                        "worker",
                        "-Q",
                        queue,
                        "-n",
                        f"bench{i}@{queue}",
                        "--pool",
                        "threads",
                        "--concurrency",
                        str(args.chunks_per_worker),
                        "--loglevel",
                        "INFO",
                        "--without-gossip",
                        "--without-mingle",
                        "--without-heartbeat",
                    ],
                    ready=b"ready.",
                )
                for i in range(workers)
            ]
            from config.celery import app

            app.conf.task_default_queue = queue
            app.amqp.__dict__.pop("queues", None)
            for size in args.sizes:
                in_flight = workers * args.concurrency
                questions = list(
                    Question.objects.filter(collection=collections[size]).values_list("external_id", "text")
                )
                plain = reference_seconds(url, questions, in_flight)
                limit = size * args.latency_ms / 1000 / in_flight
                begin = time.perf_counter()
                run = evaluation_start(ranker=rankers[size], trigger=RunTrigger.API)
                while True:
                    run.refresh_from_db()
                    if run.is_finished:
                        break
                    time.sleep(0.02)
                wall = time.perf_counter() - begin
                assert run.status == "succeeded", run.error
                assert run.questions_done == size
                metric = metric_seconds(run)
                print(
                    f"| {size:,} | {workers} | {in_flight} | {limit:.2f} s | {plain:.2f} s | {wall:.2f} s "
                    f"| {wall / limit:.2f}× | {wall / plain:.2f}× | {metric:.2f} s |",
                    flush=True,
                )
            for process in started:
                processes.stop(process)
    finally:
        processes.stop_all()


if __name__ == "__main__":
    main()
