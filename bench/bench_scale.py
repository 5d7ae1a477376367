"""How the app's costs grow with a collection's size (issue 37 §2, §3), each step in a process of its own.

For each database (``--databases``: SQLite, PostgreSQL) and N (``--sizes``, default 10,000 and 200,000) a
fresh database gets N synthetic answers (titles of 6 and bodies of 80 words drawn from a Zipf vocabulary
of 30,000 words, a fixed seed) and Q questions (the first of ``--questions``, default 1,000 then 10,000;
3 labels each), and each step runs in a new Python process, so its peak memory (``ru_maxrss``) is its
own. Printed per step: wall time, CPU time (user + sys), peak RSS, and the 1-minute load average at its
end (the machine is shared); for the per-process index the memory one more process adds (RSS and
anonymous, i.e. private, memory after loading the index and ranking 20 questions, less before). Steps:

* ``import``: the N answers, questions and labels through ``trainer.services.collection_import``;
* ``add 1,000``: 1,000 new answers imported into the N (rolled back after), and the same through the
  old code path measured in the same run (``answers_upsert`` as it was: every answer of the collection
  loaded), issue 37's reference: 17.5 s and 1.4 GiB at 1M;
* ``index build``: ``load_index`` with nothing on disk (builds, saves, maps);
* ``index, one more process``: ``load_index`` of the saved index plus 20 rankings; against the old way,
  every process holding its own copy (the same files read into memory as the old ``read_index`` did:
  ids list and dict, the fields' vocabularies, the arrays), issue 37: ~0.7 GiB per million answers;
* ``embeddings``: the whole build pipeline (plan, parts of 256, assemble) with a stub model (a fixed
  vector per text, no inference) so that only the pipeline's own overhead is timed, beside the old
  pipeline (``rankers/semantic.py`` at ``OLD_COMMIT``, loaded from git) on the same data; issue 37's
  reference: 5.5 s at 50k, 62 s at 200k. At or below ``--real-model-max`` (default 0) the shipped model
  encodes instead; ``--fanout`` measures the real model;
* ``evaluation``: ``evaluation.services.versions_compare`` of the builtin v1 (BM25) with itself on the
  test questions; then, for each further Q of ``--questions``, the questions up to Q imported (with their
  labels) and the evaluation again;
* ``ranker_server``: ``manage.py ranker_server`` of the collection (builtin BM25, ``--no-ubi``) under an
  open-loop load of ``--server-rate`` requests/s for ``--server-seconds`` (bench_ubi's generator), p50
  and p99 from each request's scheduled time; the server's CPU a request and peak RSS (issue 37: p50 4-9 ms).

``--fanout 1 2 4``: the real model's answer-embeddings build of ``--fanout-answers`` answers (default
2,048: 8 parts) by a real ``celery worker`` (prefork, as docker-compose starts it) with 1, 2 and 4 pool
processes on this machine, PostgreSQL and Redis: wall from the plan task's queueing to the build's
SUCCEEDED, CPU of all the worker's processes, each part's time from the worker's log, and what M machines
would give from those figures (parts are independent). Needs PostgreSQL and Redis, as does
``--databases postgresql``: run under ``bin/test_services``, which starts throwaway ones (each N gets a
database of its own on that server, dropped after).

    .venv/bin/python bench/bench_scale.py [--sizes 10000 200000] [--questions 1000 10000]
    .venv/bin/python bin/test_services -- .venv/bin/python bench/bench_scale.py --fanout 1 2 4 \\
        --databases postgresql sqlite [--sizes ...]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import types
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ADDED = 1_000
OLD_COMMIT = "3a01925"  # main before issue 37 §2's changes
WORDS = 30_000


# --- measuring (in the step's own process) -----------------------------------------------------------


def memory_mb() -> dict[str, float]:
    """RSS and anonymous (private) memory of this process now, in MB."""
    fields = {}
    for line in Path("/proc/self/smaps_rollup").read_text().splitlines():
        name, _, rest = line.partition(":")
        if name in ("Rss", "Anonymous", "Pss"):
            fields[name.lower()] = int(rest.split()[0]) / 1024
    return fields


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def timed(step, *args):
    wall, cpu = time.perf_counter(), cpu_seconds()
    extra = step(*args) or {}
    return {"wall": time.perf_counter() - wall, "cpu": cpu_seconds() - cpu, "peak": peak_mb(), **extra}


# --- data -------------------------------------------------------------------------------------------


def vocabulary():
    import numpy as np

    rng = np.random.default_rng(7)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    words = {"".join(rng.choice(letters, size=rng.integers(3, 10))) for _ in range(WORDS * 2)}
    words = sorted(words)[:WORDS]
    weights = 1 / np.arange(1, len(words) + 1) ** 1.07
    return np.array(words), weights / weights.sum()


def texts(n: int, length: int, seed: int):
    import numpy as np

    words, p = vocabulary()
    rng = np.random.default_rng(seed)
    drawn = words[rng.choice(len(words), size=(n, length), p=p)]
    return [" ".join(row) for row in drawn]


def answer_records(n: int, prefix: str = "a", seed: int = 1):
    from corpus.formats.records import AnswerRecord

    titles, bodies = texts(n, 6, seed), texts(n, 80, seed + 1)
    return [AnswerRecord(f"{prefix}{i}", titles[i], bodies[i]) for i in range(n)]


# --- steps (each in its own process) ---------------------------------------------------------------


def collection():
    from corpus.models import Collection

    return Collection.objects.get(slug="scale")


def step_populate(n: int, questions: int):
    import numpy as np
    from django.core.management import call_command

    from corpus.formats.records import JudgmentRecord, QuestionRecord
    from corpus.services import collection_create
    from trainer.services import collection_import

    call_command("migrate", verbosity=0)
    answers = answer_records(n)
    asked = [QuestionRecord(f"q{i}", text) for i, text in enumerate(texts(questions, 5, 99))]
    rng = np.random.default_rng(3)
    judgments = [
        JudgmentRecord(f"q{q}", f"a{a}", int(rng.integers(1, 4)), "bench", q)
        for q in range(questions)
        for a in rng.choice(n, size=3, replace=False)
    ]

    def work():
        collection_import(
            collection=collection_create(name="Scale", slug="scale"),
            answers=answers,
            questions=asked,
            judgments=judgments,
        )

    return timed(work)


def old_answers_upsert(*, collection, records):
    """``corpus.services.answers_upsert`` before issue 37: every answer of the collection loaded."""
    from django.utils import timezone

    from corpus.models import Answer
    from corpus.services import UpsertSummary

    summary = UpsertSummary()
    existing = {a.external_id: a for a in Answer.objects.filter(collection=collection)}
    to_create, to_update = [], []
    now = timezone.now()
    for record in records:
        answer = existing.get(record.external_id)
        if answer is None:
            to_create.append(
                Answer(
                    collection=collection,
                    external_id=record.external_id,
                    title=record.title,
                    body=record.body,
                    metadata=record.metadata,
                )
            )
        elif (answer.title, answer.body, answer.metadata) != (record.title, record.body, record.metadata):
            answer.title, answer.body, answer.metadata, answer.updated_at = (
                record.title,
                record.body,
                record.metadata,
                now,
            )
            to_update.append(answer)
        else:
            summary.unchanged += 1
    Answer.objects.bulk_create(to_create, batch_size=1000)
    Answer.objects.bulk_update(to_update, ["title", "body", "metadata", "updated_at"], batch_size=1000)
    summary.created, summary.updated = len(to_create), len(to_update)
    return summary


class RolledBack(Exception):
    pass


def step_add(old: bool):
    from django.db import transaction

    from trainer.services import imports

    records = answer_records(ADDED, prefix="new", seed=11)
    target = collection()
    if old:
        imports.answers_upsert = old_answers_upsert  # the old code path, for the reference only

    def work():
        try:
            with transaction.atomic():
                summary = imports.collection_import(collection=target, answers=records)
                assert summary.answers.created == ADDED
                raise RolledBack
        except RolledBack:
            pass

    return timed(work)


def step_index_build():
    from rankers.index import load_index

    return timed(lambda: {"answers": load_index(collection=collection()).size})


def _rank_some(index):
    from rankers.text import tokenize

    for text in texts(20, 5, 5):
        index.scores("both", tokenize(text))


def step_index_process(old: bool):
    import gc

    import bm25s
    import numpy as np

    from rankers.index import FIELDS, index_fingerprint, index_root, load_index
    from rankers.string_table import StringTable

    target = collection()
    gc.collect()
    before = memory_mb()
    held = []

    def new():
        index = load_index(collection=target)
        _rank_some(index)
        held.append(index)

    def old_way():
        # What every process held before: the saved index read into memory (the old read_index).
        path = index_root(collection_id=target.pk) / index_fingerprint(collection=target)
        ids = list(StringTable.load(path, "ids"))
        position = {external_id: i for i, external_id in enumerate(ids)}
        arrays = {name: np.load(path / f"{name}.npy") for name in ("doc_offsets", "doc_terms", "idf")}
        arrays.update({name: np.load(path / f"{name}.npy") for name in ("title_offsets", "title_terms")})
        bm25 = {f: bm25s.BM25.load(str(path / f)) for f in FIELDS if (path / f).exists()}
        vocab = dict(bm25["both"].vocab_dict)
        held.append((ids, position, arrays, bm25, vocab))

    result = timed(old_way if old else new)
    gc.collect()
    after = memory_mb()
    return {
        **result,
        "added_rss": after["rss"] - before["rss"],
        "added_anon": after["anonymous"] - before["anonymous"],
    }


class StubEncoder:
    """A fixed unit vector per text, no inference: the pipeline's own cost."""

    def encode(self, texts, batch_size=16):
        import numpy as np

        out = np.empty((len(texts), 384), dtype=np.float32)
        for i, text in enumerate(texts):
            out[i] = np.random.default_rng(zlib.crc32(text.encode())).standard_normal(384)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def old_semantic():
    """``rankers/semantic.py`` as it was at OLD_COMMIT, as a module of its own."""
    source = subprocess.run(
        ["git", "show", f"{OLD_COMMIT}:rankers/semantic.py"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    module = types.ModuleType("rankers.semantic_old")
    module.__file__ = "rankers/semantic_old.py"
    sys.modules[module.__name__] = module
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def step_embeddings(old: bool, real: bool, directory: str):
    from django.test.utils import override_settings

    from rankers import semantic
    from rankers.index import load_index
    from rankers.models import EmbeddingBuild

    target = collection()
    index = load_index(collection=target)
    module = old_semantic() if old else semantic
    if not real:
        # Where each pipeline reads it: the old module's own name; the package's build module (the package
        # re-exports no load_encoder, so setting one there would change nothing).
        def stub(**kwargs):
            return StubEncoder()

        for reader in (module,) if old else (semantic.build, semantic.encoding):
            reader.load_encoder = stub
    EmbeddingBuild.objects.filter(collection=target).delete()
    shutil.rmtree(directory, ignore_errors=True)

    def work():
        with override_settings(EMBEDDINGS_DIR=directory):
            vectors = module.embeddings_build_now(collection=target, index=index)
        return {"answers": len(vectors)}

    return timed(work)


def step_evaluation():
    from evaluation.services import versions_compare
    from rankers.index import load_index
    from rankers.models import Ranker
    from rankers.services import ranker_create

    target = collection()
    load_index(collection=target)
    ranker = Ranker.objects.filter(collection=target, name="bench").first() or ranker_create(
        collection=target, name="bench", kind="builtin"
    )
    version = ranker.champion

    def work():
        comparison = versions_compare(challenger=version, champion=version)
        return {"questions": comparison.questions}

    return timed(work)


def step_questions(start: int, total: int):
    """Questions ``start`` .. ``total`` - 1 (3 labels each) imported into the collection: Q grows."""
    import numpy as np

    from corpus.formats.records import JudgmentRecord, QuestionRecord
    from corpus.models import Answer
    from trainer.services import collection_import

    target = collection()
    n = Answer.objects.filter(collection=target).count()
    asked = [QuestionRecord(f"q{i}", text) for i, text in enumerate(texts(total, 5, 99)) if i >= start]
    rng = np.random.default_rng(4)
    judgments = [
        JudgmentRecord(f"q{q}", f"a{a}", int(rng.integers(1, 4)), "bench", q)
        for q in range(start, total)
        for a in rng.choice(n, size=3, replace=False)
    ]
    return timed(lambda: collection_import(collection=target, questions=asked, judgments=judgments) and None)


def _cpu_of(pid: int) -> float:
    """User + system CPU seconds of a live process (its own, not its children's)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _peak_of(pid: int) -> float:
    """Peak RSS (VmHWM) of a live process, in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def step_fanout(workers: int, queue: str, log: str):
    """The answer-embeddings build of the collection by a real ``celery worker`` with ``workers`` pool
    processes (prefork, as docker-compose and ``make run`` start it), from the plan task queued to the
    build's SUCCEEDED row, the shipped model encoding. CPU: every worker process's (the pool's children
    are reaped at the worker's warm shutdown), less the main process's start-up; peak: the largest one's."""
    import re

    from django.conf import settings

    from rankers import semantic, tasks
    from rankers.index import load_index
    from rankers.models import BuildStatus, EmbeddingBuild

    target = collection()
    index = load_index(collection=target)
    EmbeddingBuild.objects.filter(collection=target).delete()
    shutil.rmtree(settings.EMBEDDINGS_DIR, ignore_errors=True)
    semantic.forget_vectors()
    log_path = Path(log)
    command = [
        sys.executable, "-m", "celery", "-A", "config", "worker", "-Q", queue, "-n", f"{queue}@localhost",
        "--pool", "prefork", "--concurrency", str(workers), "--loglevel", "INFO",
        "--without-gossip", "--without-mingle", "--without-heartbeat",
    ]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with log_path.open("wb") as out:
        worker = subprocess.Popen(
            command, cwd=ROOT, env={**os.environ, "CELERY_QUEUE": queue}, stdout=out, stderr=subprocess.STDOUT
        )
    try:
        deadline = time.monotonic() + 120
        while b"ready." not in log_path.read_bytes():
            if worker.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"celery worker did not start:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.05)
        start_up = _cpu_of(worker.pid)
        started = time.perf_counter()
        build, _ = semantic.embeddings_build_for(index=index)
        tasks.embeddings_plan.apply_async(kwargs={"build_id": build.pk}, queue=queue)
        while build.status not in (BuildStatus.SUCCEEDED, BuildStatus.FAILED):
            if worker.poll() is not None:
                raise SystemExit(f"celery worker died:\n{log_path.read_text()[-3000:]}")
            time.sleep(0.1)
            build.refresh_from_db()
        wall = time.perf_counter() - started
    finally:
        worker.terminate()
        worker.wait(120)
    if build.status != BuildStatus.SUCCEEDED:
        raise SystemExit(f"the build failed: {build.error}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime) - start_up
    took = {
        name: [float(x) for x in re.findall(rf"rankers\.{name}\[[^]]+\] succeeded in ([0-9.]+)s", log_path.read_text())]
        for name in ("embeddings_plan", "embeddings_part")
    }  # fmt: skip
    return {
        "wall": wall,
        "cpu": cpu,
        "peak": after.ru_maxrss / 1024,
        "answers": index.size,
        "parts": build.parts_total,
        "plan": took["embeddings_plan"][0] if took["embeddings_plan"] else float("nan"),
        "part_times": took["embeddings_part"],
        "taken_over": sum(
            int(x) for x in re.findall(r"Took over (\d+) embeddings part", log_path.read_text())
        ),
    }


def child(args) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    old = args.old
    steps = {
        "populate": lambda: step_populate(args.n, args.questions),
        "questions": lambda: step_questions(args.n, args.questions),
        "add": lambda: step_add(old),
        "index-build": step_index_build,
        "index-process": lambda: step_index_process(old),
        "embeddings": lambda: step_embeddings(old, args.real, args.embeddings_dir),
        "evaluation": step_evaluation,
        "fanout": lambda: step_fanout(args.n, args.queue, args.log),
        "baseline": lambda: timed(lambda: None),
    }
    print("RESULT " + json.dumps(steps[args.step]()), flush=True)


# --- the parent: one process per step --------------------------------------------------------------


def load() -> float:
    return os.getloadavg()[0]


def run(step: str, env: dict, *extra: str) -> dict:
    command = [sys.executable, __file__, "--step", step, *extra]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"step {step} failed")
    return {**json.loads(lines[-1][len("RESULT ") :]), "load": load()}


def row(name: str, r: dict, note: str = "") -> str:
    return (
        f"| {name} | {r['wall']:.2f} s | {r['cpu']:.2f} s | {r['peak']:.0f} MB | {r['load']:.1f} | {note} |"
    )


HEADER = (
    "| step | wall | CPU | peak RSS | load | vs old path (same run) / issue 37 |\n|---|---|---|---|---|---|"
)


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def postgres_database(server_url: str, name: str, *, drop_only: bool = False) -> str:
    """A fresh database ``name`` on the PostgreSQL server of ``server_url``; its URL."""
    import psycopg

    base, _, _ = server_url.rpartition("/")
    with psycopg.connect(
        base.replace("postgres://", "postgresql://", 1) + "/postgres", autocommit=True
    ) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        if not drop_only:
            db.execute(f'CREATE DATABASE "{name}"')
    return f"{base}/{name}"


def server_latency(env: dict, work: Path, rate: float, seconds: float) -> dict:
    """``manage.py ranker_server`` (the builtin BM25 ranker, ``--no-ubi``) under an open-loop load of
    ``rate`` POST / a second for ``seconds`` (bench_ubi's generator; latency from each request's scheduled
    time), after a 3 s warm-up; the collection's own question texts, in turn. The server's CPU time a
    request and peak RSS from /proc."""
    import numpy as np

    sys.path.insert(0, str(ROOT / "bench"))
    from bench_ubi import Load

    port = free_port()
    log = work / f"ranker-server-{port}.log"
    started = time.perf_counter()
    server = subprocess.Popen(
        [sys.executable, "manage.py", "ranker_server", "--collection", "scale", "--port", str(port), "--no-ubi"],
        cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        while b"on http://" not in log.read_bytes():
            if server.poll() is not None or time.perf_counter() - started > 600:
                raise SystemExit(f"ranker_server did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.05)
        start_wall, start_cpu = time.perf_counter() - started, _cpu_of(server.pid)
        questions = texts(1_000, 5, 99)
        Load(rate, 3, events=False, texts=questions[::-1]).run(f"http://127.0.0.1:{port}/", offset=500_000)
        cpu = _cpu_of(server.pid)
        measured = Load(rate, seconds, events=False, texts=questions)
        measured.run(f"http://127.0.0.1:{port}/")
        cpu = _cpu_of(server.pid) - cpu
        peak = _peak_of(server.pid)
    finally:
        server.terminate()
        server.wait(30)
    latencies = np.array(measured.latencies)
    sent = latencies - np.array(measured.lags)  # from the moment the generator sent it
    return {
        "start": start_wall,
        "start_cpu": start_cpu,
        "requests": len(latencies),
        "errors": measured.errors,
        "p50": float(np.percentile(latencies, 50)),
        "p99": float(np.percentile(latencies, 99)),
        "lag99": float(np.percentile(measured.lags, 99)),
        "sent50": float(np.percentile(sent, 50)),
        "sent99": float(np.percentile(sent, 99)),
        "cpu_ms": 1000 * cpu / max(1, len(latencies)),
        "peak": peak,
        "load": load(),
    }


def sizes_part(args, database: str, n: int) -> None:
    """Every step at N answers and the first Q; then Q grown to each further one (import, evaluation)."""
    work = Path(tempfile.mkdtemp(prefix=f"bench-scale-{database}-{n}-"))
    first_q = args.questions[0]
    if database == "postgresql":
        url = postgres_database(os.environ["DATABASE_URL"], f"bench_scale_{n}")
    else:
        url = f"sqlite:///{work / 'db.sqlite3'}"
    env = {
        **os.environ,
        "DEBUG": "1",
        "SECRET_KEY": "bench-scale",
        "LOG_LEVEL": "WARNING",
        "DATABASE_URL": url,
        "RANK_TRAINER_VAR_DIR": str(work / "var"),
        "MODEL_DIR": str(work / "models"),
        "EMBEDDINGS_DIR": str(work / "embeddings"),
    }
    env.pop("REDIS_URL", None)  # no worker here: an import's "build the index soon" goes to a folder
    try:
        print(f"\n### {database}, N = {n:,} answers, Q = {first_q:,} (load {load():.1f})\n")
        print(HEADER)
        base = run("baseline", env)
        populate = run("populate", env, "--n", str(n), "--questions", str(first_q))
        print(row(f"import {n:,} answers, {first_q:,} questions", populate), flush=True)
        new, old = run("add", env), run("add", env, "--old")
        issue = f"; issue 37 at 1M: 17.5 s, 1.4 GiB ({17.5 / new['wall']:.0f}×)" if n == 1_000_000 else ""
        print(row(f"add {ADDED:,} answers", new, f"old path {old['wall']:.2f} s, {old['peak']:.0f} MB: "
                  f"**{old['wall'] / new['wall']:.1f}×** the time, {old['peak'] / new['peak']:.1f}× the peak{issue}; "
                  f"process baseline {base['peak']:.0f} MB"), flush=True)  # fmt: skip
        built = run("index-build", env)
        print(row("index build (once per version)", built), flush=True)
        mapped, held = run("index-process", env), run("index-process", env, "--old")
        print(row("index, one more process (load + 20 rankings)", mapped,
                  f"adds {mapped['added_anon']:.0f} MB private ({mapped['added_rss']:.0f} MB RSS, shared pages "
                  f"included); old: {held['added_anon']:.0f} MB private "
                  f"(**{held['added_anon'] / max(mapped['added_anon'], 1):.0f}×**)"), flush=True)  # fmt: skip
        real = n <= args.real_model_max
        label = "shipped model" if real else "stub model"
        emb_new = run(
            "embeddings", env, "--embeddings-dir", str(work / "emb-new"), *(["--real"] if real else [])
        )
        note = ""
        if (not real or args.old_embeddings_with_model) and n <= args.old_embeddings_max:
            emb_old = run("embeddings", env, "--old", "--embeddings-dir", str(work / "emb-old"),
                          *(["--real"] if real else []))  # fmt: skip
            note = f"old pipeline {emb_old['wall']:.2f} s wall, {emb_old['cpu']:.2f} s CPU " \
                   f"(**{emb_old['cpu'] / emb_new['cpu']:.1f}×** the CPU)"  # fmt: skip
        print(row(f"embeddings pipeline, {label}", emb_new, note), flush=True)
        for i, q in enumerate(args.questions):
            if i:
                grown = run("questions", env, "--n", str(args.questions[i - 1]), "--questions", str(q))
                print(
                    row(f"import {q - args.questions[i - 1]:,} more questions (Q = {q:,})", grown), flush=True
                )
            evaluation = run("evaluation", env)
            per = 1000 * evaluation["wall"] / max(1, evaluation["questions"])
            print(row(f"evaluation, Q = {q:,} (v1 vs v1, {evaluation['questions']:,} test questions)",
                      evaluation, f"{per:.1f} ms a question (issue 37: 4–5)"), flush=True)  # fmt: skip
        if args.server_seconds:
            served = server_latency(env, work, args.server_rate, args.server_seconds)
            print(
                f"| ranker_server, {served['requests']} POST / at {args.server_rate:.0f}/s | p50 "
                f"**{served['p50']:.1f} ms**, p99 **{served['p99']:.1f} ms** | {served['cpu_ms']:.1f} ms a "
                f"request | {served['peak']:.0f} MB | {served['load']:.1f} | start {served['start']:.1f} s "
                f"({served['start_cpu']:.1f} s CPU); {served['errors']} errors; generator lag p99 "
                f"{served['lag99']:.1f} ms (from the send: p50 {served['sent50']:.1f}, p99 {served['sent99']:.1f} ms); "
                "issue 37: p50 4–9 ms |",
                flush=True,
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
        if database == "postgresql":
            postgres_database(os.environ["DATABASE_URL"], f"bench_scale_{n}", drop_only=True)


def fanout_part(args) -> None:
    """The real model's build of ``--fanout-answers`` answers with 1, 2, 4 worker processes (PostgreSQL
    and Redis: the broker the workers share), and what several machines would give."""
    import numpy as np

    if not os.environ.get("REDIS_URL") or not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("--fanout needs PostgreSQL and Redis: run it under bin/test_services (see --help)")
    n = args.fanout_answers
    work = Path(tempfile.mkdtemp(prefix="bench-scale-fanout-"))
    url = postgres_database(os.environ["DATABASE_URL"], "bench_scale_fanout")
    env = {
        **os.environ,
        "DEBUG": "1",
        "SECRET_KEY": "bench-scale",
        "LOG_LEVEL": "WARNING",
        "DATABASE_URL": url,
        "RANK_TRAINER_VAR_DIR": str(work / "var"),
        "MODEL_DIR": str(work / "models"),
        "EMBEDDINGS_DIR": str(work / "embeddings"),
        # The watchdog takes a build's unfinished parts over when its heartbeat is older than this; the
        # heartbeat moves once a part, and one part of 256 answers takes 30-60 s on a busy 2-core machine,
        # so with the default 30 s live parts were queued again and encoded twice (seen in a first run).
        "EVALUATION_STALE_SECONDS": str(args.fanout_stale_seconds),
    }
    try:
        run("populate", env, "--n", str(n), "--questions", "100")
        run("index-build", env)
        print(f"\n### Embeddings build with the shipped model, {n:,} answers, PostgreSQL, Redis, "
              f"{os.cpu_count()} cores (load {load():.1f})\n")  # fmt: skip
        print("| worker processes | wall | CPU (all workers) | CPU ms an answer | peak RSS (largest) | load | "
              "part of 256: median / max | plan task | parts taken over | vs 1 process |\n"
              "|---|---|---|---|---|---|---|---|---|---|")  # fmt: skip
        results = {}
        for k in args.fanout:
            queue = f"bench-scale-{k}-{os.getpid()}"
            r = run("fanout", env, "--n", str(k), "--queue", queue, "--log", str(work / f"worker-{k}.log"))
            results[k] = r
            parts = np.array(r["part_times"])
            print(f"| {k} | {r['wall']:.1f} s | {r['cpu']:.1f} s | {1000 * r['cpu'] / r['answers']:.1f} | "
                  f"{r['peak']:.0f} MB | {r['load']:.1f} | {np.median(parts):.1f} s / {parts.max():.1f} s "
                  f"({len(parts)} tasks) | {r['plan']:.2f} s | {r['taken_over']} | "
                  f"{results[args.fanout[0]]['wall'] / r['wall']:.2f}× |", flush=True)  # fmt: skip
        # One machine's throughput two ways: as measured (the shared machine's wall time, all its cores
        # busy with others' work too), and from the CPU an answer took, were the cores the build's alone.
        best = min(results.values(), key=lambda r: r["wall"])
        rates = {
            "as measured (wall)": best["answers"] / best["wall"],
            "its cores alone (CPU)": min(os.cpu_count() or 1, max(args.fanout))
            / min(r["cpu"] / r["answers"] for r in results.values()),
        }
        print(f"\nSeveral machines: parts are independent, so M machines sharing the database, the broker and "
              "EMBEDDINGS_DIR (each part's file is written there, and the last part assembles from them) divide "
              "the parts' time by M; the plan and the assembly stay (the pipeline's own cost, see the stub rows). "
              f"One {os.cpu_count()}-core machine encodes "
              + " or ".join(f"{rate:.1f} answers/s {how}" for how, rate in rates.items()) + ":")  # fmt: skip
        for answers in (200_000, 1_000_000):
            cells = [
                f"{m} machine{'s' * (m > 1)} " + " / ".join(f"{answers / rate / m / 3600:.1f} h" for rate in rates.values())
                for m in (1, 2, 4, 8)
            ]  # fmt: skip
            print(f"- {answers:,} answers ({' / '.join(rates)}): " + ", ".join(cells))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        postgres_database(os.environ["DATABASE_URL"], "bench_scale_fanout", drop_only=True)


def parent(args) -> None:
    print(f"bench_scale: sizes {args.sizes}, questions {args.questions}, databases {args.databases}, "
          f"{os.cpu_count()} cores, load {load():.1f} (load: 1-minute load average at each step's end)")  # fmt: skip
    if "postgresql" in args.databases and not os.environ.get("DATABASE_URL", "").startswith("postgres"):
        raise SystemExit("--databases postgresql needs DATABASE_URL of a PostgreSQL server: see --help")
    if args.fanout:
        fanout_part(args)
    for database in args.databases:
        for n in args.sizes:
            sizes_part(args, database, n)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="*", default=[10_000, 200_000])
    parser.add_argument("--questions", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--databases", nargs="+", choices=["sqlite", "postgresql"], default=["sqlite"])
    parser.add_argument("--real-model-max", type=int, default=0)
    parser.add_argument("--old-embeddings-with-model", action="store_true")
    # The old pipeline grows like N^1.75: about half an hour at 1M.
    parser.add_argument("--old-embeddings-max", type=int, default=200_000)
    parser.add_argument("--server-rate", type=float, default=20)
    parser.add_argument("--server-seconds", type=float, default=20, help="0: no ranker_server step")
    parser.add_argument("--fanout", type=int, nargs="*", default=[], help="worker processes, e.g. 1 2 4")
    parser.add_argument("--fanout-answers", type=int, default=2_048)
    parser.add_argument("--fanout-stale-seconds", type=int, default=600)
    parser.add_argument("--step")
    parser.add_argument("--n", type=int, default=0)
    parser.add_argument("--old", action="store_true")
    parser.add_argument("--real", action="store_true")
    parser.add_argument("--embeddings-dir", default="")
    parser.add_argument("--queue", default="")
    parser.add_argument("--log", default="")
    args = parser.parse_args()
    if args.step:
        if args.step in ("populate", "questions"):
            args.questions = args.questions[0]
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
