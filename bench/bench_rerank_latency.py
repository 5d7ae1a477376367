"""What reranking an engine's top 50 adds to its latency, cold and warm (issue 25 §2, issue 35 §4; see
bench/README.md, "Reranking an engine's answers: added latency").

    make engines && .venv/bin/python bench/bench_rerank_latency.py

Starts a real OpenSearch node as the tests do (``tests/rankers/real_engines.py``: the launcher built by
``make engines``, the Cranfield demo answers in index ``cranfield``), loads the Cranfield demo (the R&R
edition, with the split its questions have in the app's ``cranfield`` demo, as ``bench_ranker.py``),
makes an engine ranker (preset ``opensearch``, default ``candidates`` 50), trains it with
``trainer.services.ranker_train`` and makes the trained version champion. ``--method`` (default
``lambdamart``: the 12 features and every signal, the costliest version) makes training choose that
method (the other candidates' CV figures set to 0); ``trained`` leaves the choice to cross-validation.
Then, over the test questions:

* **the engine alone**: ``EngineBackend.rank(question, 50)``, what the server's POST / sends it;
* **the rerank alone**: ``RerankingBackend.rerank(question, engine's top 50, 10)`` in this process, with
  the question's vector **cold** (``rankers.semantic.forget_vectors()`` before each question, as a fresh
  process: the question is encoded on one thread, as ``ranker_server`` does, and the answers' vectors, all already
  computed, are read from the collection state's index-ordered store, ``rankers.candidate_store``;
  ``--cold-passes`` passes), beside **the path before** issue 35 §4 (``cold_path``: the two-thread
  session, the answers' vectors read from their per-text files under ``EMBEDDINGS_DIR/returned``), each
  question's two reranks one after the other so that both meet the same load, their answers compared;
  and the question's vector alone forgotten; and **warm** (the next ``--repeats`` passes: both in
  memory); with the CPU time (cold: the process's, onnxruntime's threads included; warm: the thread's),
  the work without waiting for a core; after ``gc.freeze()`` as the server does;
* **end to end**, through ``manage.py ranker_server --ranker ID`` in a subprocess: the client's time of
  POST / minus the engine's time the server reports (``Server-Timing: engine;dur=``): what the server
  adds to the engine (the rerank step, its thread hand-off, the JSON; the server's own part is its
  ``total`` minus ``engine``; the question is encoded while the engine searches), cold = each question's first
  request to a fresh server, warm = the next passes; and POST /rank with the engine's top 50 (all of it
  is added latency). The server runs with ``--budget-ms 10000`` so that the figures are the rerank's
  real times, not the 50 ms budget's fallbacks (their count at 50 ms is shown).

A first pass encodes the answers' vectors the test questions meet for the first time (only the first
run with a given ``--embeddings-cache`` does; its time is shown, not part of the figures). Percentiles
are over all samples (questions x passes). ``--profile`` prints cProfile's top functions of the warm
rerank. The database is SQLite in a private temporary directory, migrated at the start and deleted at
the end, with MODEL_DIR; the node is stopped at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import gc
import os
import pstats
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
VAR_DIR = tempfile.mkdtemp(prefix="bench-rerank-")
os.environ["RANK_TRAINER_VAR_DIR"] = VAR_DIR
os.environ["MODEL_DIR"] = str(Path(VAR_DIR) / "models")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("SECRET_KEY", "bench")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE", "1")  # the node listens on loopback
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.pop("DATABASE_URL", None)  # SQLite in VAR_DIR: nothing else sees this bench's data
DEFAULT_CACHE = Path(tempfile.gettempdir()) / "rank-trainer-bench-embeddings" / "rerank-latency"

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connections, transaction  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

call_command("migrate", verbosity=0, interactive=False)

from corpus.selectors import test_questions  # noqa: E402
from corpus.services import split_for  # noqa: E402
from rankers import semantic  # noqa: E402
from rankers.backends import get_backend, service_backend  # noqa: E402
from rankers.base import RankQuery  # noqa: E402
from rankers.builtin import clear_ranker_caches  # noqa: E402
from rankers.embedding import INTRA_OP_THREADS  # noqa: E402
from rankers.reranking import RerankingBackend  # noqa: E402
from rankers.semantic import forget_vectors  # noqa: E402
from rankers.services import ranker_create, version_promote  # noqa: E402
from tests.rankers import real_engines as real  # noqa: E402
from trainer.learner import training as learner  # noqa: E402
from trainer.services import demo_collection_load, ranker_train  # noqa: E402

K = 50
ROWS = 10
BUDGET_MS = 50
GOAL_P99_WARM_MS = 15.0
GOAL_P99_COLD_MS = 50.0


@contextmanager
def cold_path(*, threads: int, store: bool) -> Iterator[None]:
    """The cold path with the question encoded by a session of ``threads`` threads and the answers'
    vectors read from the index-ordered store or (``store`` False) from their per-text files. Before
    issue 35 §4 it was two threads, no store."""
    single, opener = semantic.encoding._encode_threads, semantic.returned.open_store
    semantic.encoding._encode_threads = threads
    if not store:
        semantic.returned.open_store = lambda *args: None  # type: ignore[assignment]
    try:
        yield
    finally:
        semantic.encoding._encode_threads, semantic.returned.open_store = single, opener
        forget_vectors()


def pct(samples: list[float], q: float) -> float:
    return float(np.percentile(np.array(samples), q))


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


def line(name: str, samples: list[float], engine_p50: float | None = None) -> str:
    p50, p99 = pct(samples, 50), pct(samples, 99)
    ratio = f"   {p50 / engine_p50:5.2f} x engine p50" if engine_p50 else ""
    return f"  {name:<44} p50 {p50:7.2f} ms   p99 {p99:7.2f} ms   max {max(samples):7.2f} ms  (n={len(samples)}){ratio}"


def server_timing(response: httpx.Response) -> dict[str, float]:
    timings = {}
    for part in response.headers.get("Server-Timing", "").split(","):
        name, _, dur = part.strip().partition(";dur=")
        if dur:
            timings[name] = float(dur)
    return timings


@contextmanager
def forced_choice(method: str) -> Iterator[None]:
    """Training as it is, except that every candidate but ``method`` gets CV NDCG 0, so that ``method``
    is chosen and fitted (its own figures are the real ones). Bench only: the latency of a method
    should not depend on which one cross-validation preferred on the day."""
    if method == "trained":
        yield
        return
    original = learner._cross_validate

    def cross_validate(make, examples, index, **kwargs):  # type: ignore[no-untyped-def]
        values, means, share = original(make, examples, index, **kwargs)
        if make().name != method:
            values, means = np.zeros_like(values), [0.0 for _ in means]
        return values, means, share

    learner._cross_validate = cross_validate
    try:
        yield
    finally:
        learner._cross_validate = original


def start_server(slug: str, ranker_id: int, log_path: Path) -> tuple[subprocess.Popen, str]:
    port = real.free_port()
    command = [sys.executable, "manage.py", "ranker_server", "--collection", slug, "--port", str(port)]
    command += ["--ranker", str(ranker_id), "--budget-ms", "10000"]
    with log_path.open("ab") as log:
        process = subprocess.Popen(
            command, cwd=ROOT, env=os.environ.copy(), stdout=log, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"ranker_server exited:\n{log_path.read_text()[-3000:]}")
        try:
            if httpx.get(url + "healthz", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    process.kill()
    raise RuntimeError("ranker_server did not start in 120 s")


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        process.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repeats", type=int, default=5, help="warm passes over the test questions")
    parser.add_argument("--embeddings-cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--profile", action="store_true", help="cProfile the warm and cold reranks")
    parser.add_argument(
        "--cold-passes", type=int, default=2, help="cold passes over the test questions (each path)"
    )
    parser.add_argument(
        "--method",
        choices=("lambdamart", "learned-fusion", "trained"),
        default="lambdamart",
        help="the version measured: training's choice made to be this method (default lambdamart: the "
        "12 features and every signal, the costliest), or 'trained': whatever cross-validation chose",
    )
    args = parser.parse_args()
    args.embeddings_cache.mkdir(parents=True, exist_ok=True)
    home = Path(VAR_DIR) / "engines" / "opensearch"
    node = real.start_node(
        "OpenSearch",
        home,
        real.java_command("opensearch", "OpenSearchNode", str(real.free_port()), str(home)),
    )
    try:
        real.opensearch_index_cranfield(node.url, "cranfield")
        with override_settings(EMBEDDINGS_DIR=args.embeddings_cache):
            os.environ["EMBEDDINGS_DIR"] = str(args.embeddings_cache)  # the server's too
            run(args, f"{node.url}/cranfield/_search")
    finally:
        node.stop()
        shutil.rmtree(VAR_DIR, ignore_errors=True)


def run(args: argparse.Namespace, search_url: str) -> None:
    started = time.perf_counter()
    collection = demo_collection_load(slug="bench-rerank")
    assert collection is not None
    for question in collection.questions.all():
        question.split = split_for(
            collection_slug="cranfield", external_id=question.external_id, test_fraction=0.3
        )
        question.save(update_fields=["split"])
    ranker = ranker_create(
        collection=collection,
        name="OpenSearch",
        kind="engine",
        config={"preset": "opensearch", "url": search_url},
    )
    with forced_choice(args.method):
        version = ranker_train(ranker=ranker)
    if version.method == "engine":
        sys.exit(f"training kept the engine's order: {version.details.get('reason')}; nothing to rerank")
    with transaction.atomic():
        version_promote(version=version, changed_by=None, reason="bench")
    ranker.refresh_from_db()
    signals = version.details.get("params", {}).get("signals", [])
    print(
        f"trained {version.label} ({version.method}, signals {', '.join(signals) or '-'}) "
        f"in {time.perf_counter() - started:.0f} s (load, index, train); {load()}"
    )
    queries = [RankQuery(q.external_id, q.text) for q in test_questions(collection=collection)]
    clear_ranker_caches()
    engine = service_backend(ranker)
    reranking = get_backend(ranker)
    assert isinstance(reranking, RerankingBackend)

    semantic.encode_on_one_thread()  # as ranker_server does
    # First sight: the answers' vectors the test questions' candidates need, encoded once (and kept).
    tops = {q.external_id: engine.rank(q, K) for q in queries}
    began = time.perf_counter()
    for q in queries:
        reranking.rerank(q, tops[q.external_id], ROWS)
    print(
        f"first pass (encodes the answers met for the first time): {time.perf_counter() - began:.1f} s; {load()}"
    )

    # As ranker_server does once loaded: what is loaded stays, out of the collector's sight.
    gc.collect()
    gc.freeze()

    # The engine alone.
    engine_ms: list[float] = []
    for _ in range(args.repeats):
        for q in queries:
            began = time.perf_counter()
            engine.rank(q, K)
            engine_ms.append((time.perf_counter() - began) * 1000)
    engine_p50 = pct(engine_ms, 50)

    # The rerank alone, in this process: cold, each question with the path of before (issue 35 §4) and the
    # current one, alternately, so that both meet the same load; each pass over the questions twice.
    variants = {
        "now": contextlib.nullcontext,
        "before": lambda: cold_path(threads=INTRA_OP_THREADS, store=False),
        "store, 2 threads": lambda: cold_path(threads=INTRA_OP_THREADS, store=True),
    }
    cold: dict[str, list[float]] = {name: [] for name in variants}
    cold_cpu: dict[str, list[float]] = {name: [] for name in variants}
    question_cold: dict[str, list[float]] = {name: [] for name in variants}
    orders_differ = 0
    for n in range(args.cold_passes):
        for i, q in enumerate(queries):
            names = list(variants)
            names = names[(i + n) % len(names) :] + names[: (i + n) % len(names)]  # each first in turn
            answers = {}
            for name in names:
                with variants[name]():
                    forget_vectors()
                    began, cpu = time.perf_counter(), time.process_time()
                    answers[name] = reranking.rerank(q, tops[q.external_id], ROWS).answers
                    cold[name].append((time.perf_counter() - began) * 1000)
                    cold_cpu[name].append((time.process_time() - cpu) * 1000)
                    if n == 0:  # the question's vector alone forgotten, the answers' in memory
                        semantic._questions.clear()
                        began = time.perf_counter()
                        reranking.rerank(q, tops[q.external_id], ROWS)
                        question_cold[name].append((time.perf_counter() - began) * 1000)
            orders_differ += any(other != answers["now"] for other in answers.values())
    for q in queries:  # every answer's vector in memory again: the warm passes find everything there
        reranking.rerank(q, tops[q.external_id], ROWS)
    warm: list[float] = []
    warm_cpu: list[float] = []
    for _ in range(args.repeats):
        for q in queries:
            began, cpu = time.perf_counter(), time.thread_time()
            reranking.rerank(q, tops[q.external_id], ROWS)
            warm.append((time.perf_counter() - began) * 1000)
            warm_cpu.append((time.thread_time() - cpu) * 1000)
    print(f"\n{len(queries)} test questions, K = {K}, {os.cpu_count()} cores; {load()}")
    print(line("engine alone (OpenSearch, top 50)", engine_ms))
    print("rerank alone (RerankingBackend.rerank, in process):")
    print(line("cold (question encoded, answers' vectors read)", cold["now"], engine_p50))
    print(line("  the path before (2 threads, per-text files)", cold["before"], engine_p50))
    print(line("  the store, the question on 2 threads", cold["store, 2 threads"], engine_p50))
    print(
        f"  {'  cold p50 / p99 now ÷ before':<44} {pct(cold['now'], 50) / pct(cold['before'], 50):5.2f} / "
        f"{pct(cold['now'], 99) / pct(cold['before'], 99):5.2f}; answers that differ: {orders_differ}"
    )
    print(line("cold, CPU time of the process (no waiting)", cold_cpu["now"], engine_p50))
    print(line("  the path before", cold_cpu["before"], engine_p50))
    print(line("  the store, the question on 2 threads", cold_cpu["store, 2 threads"], engine_p50))
    print(line("cold question vector only", question_cold["now"], engine_p50))
    print(line("  2 threads", question_cold["before"] + question_cold["store, 2 threads"], engine_p50))
    print(line("warm", warm, engine_p50))
    print(line("warm, CPU time of the thread (no waiting)", warm_cpu, engine_p50))

    # End to end through ranker_server.
    connections.close_all()
    log_path = Path(VAR_DIR) / "ranker-server.log"
    process, url = start_server(collection.slug, ranker.pk, log_path)
    try:
        added_cold: list[float] = []
        added_warm: list[float] = []
        step_warm: list[float] = []
        server_warm: list[float] = []
        rank_call: list[float] = []
        rank_step: list[float] = []
        engine_in_server: list[float] = []
        mismatches = 0
        with httpx.Client(timeout=30) as client:
            for r in range(args.repeats + 1):
                for q in queries:
                    body = {"question": {"id": q.external_id, "text": q.text}, "rows": ROWS}
                    began = time.perf_counter()
                    response = client.post(url, json=body)
                    total = (time.perf_counter() - began) * 1000
                    assert response.status_code == 200 and response.json()["reranked"], response.text
                    timing = server_timing(response)
                    (added_cold if r == 0 else added_warm).append(total - timing["engine"])
                    if r:
                        step_warm.append(timing["rerank"])
                        server_warm.append(timing["total"] - timing["engine"])
                        engine_in_server.append(timing["engine"])
                    expected = reranking.rerank(q, tops[q.external_id], ROWS).answers
                    mismatches += [(a["id"], a["score"]) for a in response.json()["answers"]] != expected
            for _ in range(args.repeats):
                for q in queries:
                    candidates = [{"id": a, "score": s} for a, s in tops[q.external_id].answers]
                    body = {
                        "question": {"id": q.external_id, "text": q.text},
                        "candidates": candidates,
                        "rows": ROWS,
                    }
                    began = time.perf_counter()
                    response = client.post(url + "rank", json=body)
                    rank_call.append((time.perf_counter() - began) * 1000)
                    rank_step.append(server_timing(response)["rerank"])
                    assert response.status_code == 200 and response.json()["reranked"], response.text
    finally:
        stop(process)
    print("end to end, ranker_server POST / (client time minus the engine's Server-Timing):")
    print(line("cold (each question's first request)", added_cold, engine_p50))
    print(line("warm", added_warm, engine_p50))
    print(line("  of which in the server (Server-Timing total)", server_warm, engine_p50))
    print(line("  of which the rerank step (Server-Timing)", step_warm, engine_p50))
    print(line("the engine as the server called it", engine_in_server))
    print(line("POST /rank, 50 candidates, warm (all of it)", rank_call, engine_p50))
    print(line("  of which the rerank step (Server-Timing)", rank_step, engine_p50))
    over = sum(ms > BUDGET_MS for ms in added_cold + added_warm)
    print(
        f"answers that differ from the in-process rerank: {mismatches}; "
        f"reranks over the default {BUDGET_MS} ms budget (would fall back): {over} of {len(added_cold + added_warm)}"
    )
    verdict = "met" if pct(warm, 99) <= GOAL_P99_WARM_MS else "NOT met"
    print(
        f"goal: p99 added <= {GOAL_P99_WARM_MS:g} ms warm (rerank alone): {pct(warm, 99):.2f} ms, {verdict}; {load()}"
    )
    for name, samples in (("rerank alone", cold["now"]), ("POST / minus the engine", added_cold)):
        verdict = "met" if pct(samples, 99) <= GOAL_P99_COLD_MS else "NOT met"
        print(f"goal: p99 <= {GOAL_P99_COLD_MS:g} ms cold ({name}): {pct(samples, 99):.2f} ms, {verdict}")

    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        for _ in range(args.repeats):
            for q in queries:
                reranking.rerank(q, tops[q.external_id], ROWS)
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)
        profile = cProfile.Profile()
        for q in queries:
            forget_vectors()
            profile.enable()
            reranking.rerank(q, tops[q.external_id], ROWS)
            profile.disable()
        print("cold reranks:")
        pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


if __name__ == "__main__":
    main()
