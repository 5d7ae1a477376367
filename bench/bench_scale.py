"""How the app's costs grow with a collection's size (issue 37 §2), each step in a process of its own.

For each N (``--sizes``, default 10,000 and 200,000) a fresh SQLite database gets N synthetic answers
(titles of 6 and bodies of 80 words drawn from a Zipf vocabulary of 30,000 words, a fixed seed) and
``--questions`` questions (default 1,000, 3 labels each), and each step runs in a new Python process,
so its peak memory (``ru_maxrss``) is its own. Printed per step: wall time, CPU time (user + sys) and
peak RSS; and for the per-process index the memory one more process adds (RSS and anonymous, i.e.
private, memory after loading the index and ranking 20 questions, less before). Steps:

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
  pipeline (``rankers/semantic.py`` at ``--old-commit``, loaded from git) on the same data; issue 37's
  reference: 5.5 s at 50k, 62 s at 200k. ``--real-model-max`` (default 10,000): at or below that N the
  shipped model encodes too (the real cost);
* ``evaluation``: ``evaluation.services.versions_compare`` of the builtin v1 (BM25) with itself: both
  rank every test question with the index and are scored.

    .venv/bin/python bench/bench_scale.py [--sizes 10000 200000] [--questions 1000] [--real-model-max 10000]
        [--old-embeddings-max 200000]
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
        module.load_encoder = lambda: StubEncoder()
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
    from rankers.services import ranker_create

    target = collection()
    load_index(collection=target)
    ranker = ranker_create(collection=target, name="bench", kind="builtin")
    version = ranker.champion

    def work():
        comparison = versions_compare(challenger=version, champion=version)
        return {"questions": comparison.questions}

    return timed(work)


def child(args) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    old = args.old
    steps = {
        "populate": lambda: step_populate(args.n, args.questions),
        "add": lambda: step_add(old),
        "index-build": step_index_build,
        "index-process": lambda: step_index_process(old),
        "embeddings": lambda: step_embeddings(old, args.real, args.embeddings_dir),
        "evaluation": step_evaluation,
        "baseline": lambda: timed(lambda: None),
    }
    print("RESULT " + json.dumps(steps[args.step]()), flush=True)


# --- the parent: one process per step --------------------------------------------------------------


def run(step: str, env: dict, *extra: str) -> dict:
    command = [sys.executable, __file__, "--step", step, *extra]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    lines = [line for line in done.stdout.splitlines() if line.startswith("RESULT ")]
    if done.returncode or not lines:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-3000:])
        raise SystemExit(f"step {step} failed")
    return json.loads(lines[-1][len("RESULT ") :])


def row(name: str, r: dict, note: str = "") -> str:
    return f"| {name} | {r['wall']:.2f} s | {r['cpu']:.2f} s | {r['peak']:.0f} MB | {note} |"


def parent(args) -> None:
    print(f"bench_scale: sizes {args.sizes}, {args.questions} questions, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}")  # fmt: skip
    for n in args.sizes:
        work = Path(tempfile.mkdtemp(prefix=f"bench-scale-{n}-"))
        env = {
            **os.environ,
            "DEBUG": "1",
            "LOG_LEVEL": "WARNING",
            "DATABASE_URL": f"sqlite:///{work / 'db.sqlite3'}",
            "MODEL_DIR": str(work / "models"),
            "EMBEDDINGS_DIR": str(work / "embeddings"),
        }
        env.pop("REDIS_URL", None)
        try:
            print(f"\n### N = {n:,} answers, Q = {args.questions:,} (load {os.getloadavg()[0]:.1f})\n")
            print("| step | wall | CPU | peak RSS | vs old path / issue 37 |\n|---|---|---|---|---|")
            base = run("baseline", env)
            populate = run("populate", env, "--n", str(n), "--questions", str(args.questions))
            print(row(f"import {n:,} answers, {args.questions:,} questions", populate), flush=True)
            new, old = run("add", env), run("add", env, "--old")
            print(row(f"add {ADDED:,} answers", new, f"old path {old['wall']:.2f} s, {old['peak']:.0f} MB "
                      f"({old['wall'] / new['wall']:.1f}× the time); process baseline {base['peak']:.0f} MB"),
                  flush=True)  # fmt: skip
            built = run("index-build", env)
            print(row("index build (once per version)", built), flush=True)
            mapped, held = run("index-process", env), run("index-process", env, "--old")
            print(row("index, one more process (load + 20 rankings)", mapped,
                      f"adds {mapped['added_anon']:.0f} MB private ({mapped['added_rss']:.0f} MB RSS, shared pages "
                      f"included); old: {held['added_anon']:.0f} MB private"), flush=True)  # fmt: skip
            real = n <= args.real_model_max
            label = "shipped model" if real else "stub model"
            emb_new = run(
                "embeddings", env, "--embeddings-dir", str(work / "emb-new"), *(["--real"] if real else [])
            )
            note = ""
            if (not real or args.old_embeddings_with_model) and n <= args.old_embeddings_max:
                emb_old = run("embeddings", env, "--old", "--embeddings-dir", str(work / "emb-old"),
                              *(["--real"] if real else []))  # fmt: skip
                note = f"old pipeline {emb_old['wall']:.2f} s ({emb_old['wall'] / emb_new['wall']:.1f}×)"
            print(row(f"embeddings, {label}", emb_new, note), flush=True)
            evaluation = run("evaluation", env)
            print(
                row(f"evaluation (v1 vs v1, {evaluation['questions']} test questions)", evaluation),
                flush=True,
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 200_000])
    parser.add_argument("--questions", type=int, default=1_000)
    parser.add_argument("--real-model-max", type=int, default=10_000)
    parser.add_argument("--old-embeddings-with-model", action="store_true")
    # The old pipeline grows like N^1.75: about half an hour at 1M.
    parser.add_argument("--old-embeddings-max", type=int, default=200_000)
    parser.add_argument("--step")
    parser.add_argument("--n", type=int, default=0)
    parser.add_argument("--old", action="store_true")
    parser.add_argument("--real", action="store_true")
    parser.add_argument("--embeddings-dir", default="")
    args = parser.parse_args()
    if args.step:
        child(args)
    else:
        parent(args)


if __name__ == "__main__":
    main()
