"""Benchmark of the builtin ranker (BM25 retrieval + LambdaMART rerank). Results go in bench/README.md.

Part 1, Cranfield: test NDCG@10 of plain BM25 and of the trained version, training time and rank
latency (p50/p99). Two editions: the R&R demo (150 questions, the app's demo collection) and, when the
original files are given (--cranfield-original DIR), all 225 original queries. "Model, forced" is the
NDCG the cross-validated model would have reached had it been used regardless of the CV decision:
what the guard protects against.

Part 2, a synthetic collection of --synthetic answers (default 100,000): index build time, memory,
index size on disk, load time from disk, and BM25 and reranked rank latency.

    DEBUG=1 DATABASE_URL=postgres://... .venv/bin/python bench/bench_ranker.py \
        --cranfield-original /work/shared/data/cranfield-original

Collections are created under bench-* slugs and deleted at the end; MODEL_DIR is a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "trainer.settings")
os.environ.setdefault("MODEL_DIR", tempfile.mkdtemp(prefix="bench-ranker-"))

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402

from corpus.formats import AnswerRecord, JudgmentRecord, QuestionRecord  # noqa: E402
from corpus.models import Collection, Question, Split  # noqa: E402
from corpus.services import collection_create, split_for  # noqa: E402
from evaluation.metrics.ranking import evaluate_rankings  # noqa: E402
from evaluation.metrics.stats import compare_runs  # noqa: E402
from rankers.backends import RankQuery, get_backend  # noqa: E402
from rankers.builtin import (  # noqa: E402
    BuiltinBackend,
    RerankModel,
    clear_ranker_caches,  # noqa: E402
    model_path,
)
from rankers.index import build_index, load_index, read_index, save_index  # noqa: E402
from rankers.models import Ranker, RankerKind  # noqa: E402
from ratings.selectors import labels_by_question  # noqa: E402
from trainer.services import collection_import, demo_collection_load, ranker_train  # noqa: E402


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def percentiles(samples_ms: list[float]) -> str:
    a = np.array(samples_ms)
    return f"p50 {np.percentile(a, 50):.2f} ms, p99 {np.percentile(a, 99):.2f} ms"


def timed_ranks(backend, queries: list[RankQuery], k: int = 10, repeats: int = 3) -> tuple[list, list[float]]:
    rankings, samples = [], []
    for r in range(repeats):
        for query in queries:
            started = time.perf_counter()
            ranking = backend.rank(query, k)
            samples.append((time.perf_counter() - started) * 1000)
            if r == 0:
                rankings.append(ranking.ids)
    return rankings, samples


def test_ndcg(backend, collection: Collection) -> tuple[float, int, list[float], np.ndarray]:
    questions = list(Question.objects.filter(collection=collection, split=Split.TEST).order_by("pk"))
    labels = labels_by_question(question_ids=[q.pk for q in questions])
    queries = [RankQuery(q.external_id, q.text) for q in questions]
    rankings, samples = timed_ranks(backend, queries)
    evaluation = evaluate_rankings(rankings, [labels[q.pk] for q in questions], k=10)
    result = evaluation.mean_ndcg()
    return result.mean, result.count, samples, evaluation.ndcg


def versus(a: np.ndarray, b: np.ndarray) -> str:
    c = compare_runs(a, b)
    return f"difference {c.difference:+.4f} (95% CI {c.ci_low:+.4f} to {c.ci_high:+.4f}, p = {c.p_value:.2f})"


def cranfield_part(collection: Collection, name: str) -> None:
    print(
        f"\n## {name}: {collection.answers.count()} answers, "
        f"{collection.questions.filter(split='train').count()} train / "
        f"{collection.questions.filter(split='test').count()} test questions"
    )
    clear_ranker_caches()
    started = time.perf_counter()
    load_index(collection=collection)
    print(f"index build: {time.perf_counter() - started:.2f} s")
    ranker = Ranker.objects.create(collection=collection, name="bench", kind=RankerKind.BUILTIN)
    bm25 = get_backend(ranker)
    bm25_ndcg, n, bm25_ms, bm25_q = test_ndcg(bm25, collection)
    started = time.perf_counter()
    version = ranker_train(ranker=ranker)
    train_s = time.perf_counter() - started
    trained_ndcg, _, trained_ms, trained_q = test_ndcg(get_backend(ranker, version), collection)
    print(f"BM25 test NDCG@10: {bm25_ndcg:.4f} over {n} questions; rank {percentiles(bm25_ms)}")
    print(
        f"training: {train_s:.2f} s; labels {version.label_count}; CV NDCG@10 model {version.cv_ndcg_model} "
        f"vs BM25 {version.cv_ndcg_bm25}; uses model: {version.uses_model}"
    )
    print(
        f"trained version test NDCG@10: {trained_ndcg:.4f} (ratio to BM25 {trained_ndcg / bm25_ndcg:.3f}); "
        f"rank {percentiles(trained_ms)}; {versus(trained_q, bm25_q)}"
    )
    if version.model_file:
        forced = BuiltinBackend(collection=collection)
        forced.model = RerankModel(model_path(version.model_file))
        forced_ndcg, _, forced_ms, forced_q = test_ndcg(forced, collection)
        print(
            f"model, forced: test NDCG@10 {forced_ndcg:.4f} (ratio to BM25 {forced_ndcg / bm25_ndcg:.3f}); "
            f"rank {percentiles(forced_ms)}; {versus(forced_q, bm25_q)}"
        )
    return version


def original_cranfield(directory: Path) -> Collection:
    """All 225 original queries; split by the app's own rule (stable hash, 30% test)."""
    text = (directory / "cran.all.1400").read_text()
    answers = []
    for block in re.split(r"^\.I ", text, flags=re.M)[1:]:
        doc_id, rest = block.split("\n", 1)
        fields = dict(re.findall(r"^\.([TABW])\n(.*?)(?=^\.[TABW]\n|\Z)", rest, flags=re.M | re.S))
        answers.append(
            AnswerRecord(
                doc_id.strip(), " ".join(fields.get("T", "").split()), " ".join(fields.get("W", "").split())
            )
        )
    queries = re.split(r"^\.I ", (directory / "cran.qry").read_text(), flags=re.M)[1:]
    questions = [
        QuestionRecord(str(n), " ".join(q.split("\n", 1)[1].replace(".W\n", "").split()))
        for n, q in enumerate(queries, start=1)
    ]
    judgments = {}
    for line in (directory / "cranqrel").read_text().split("\n"):
        if line.strip():
            qid, doc, code = line.split()
            code = int(code)
            judgments[(qid, doc)] = max(4 - code, 0) if code > 0 else 0
    collection = collection_create(name="bench cranfield 225", slug="bench-cranfield-225")
    collection_import(
        collection=collection,
        answers=answers,
        questions=questions,
        judgments=[JudgmentRecord(q, d, s) for (q, d), s in judgments.items()],
    )
    return collection


WORDS = 30_000


def synthetic(n: int, seed: int = 0) -> Collection:
    rng = np.random.default_rng(seed)
    # Zipf-distributed vocabulary of made-up words, answers of 20–200 terms with a 5–12 term title.
    vocab = np.array([f"w{i:05d}x" for i in range(WORDS)])
    weights = 1 / np.arange(1, WORDS + 1) ** 1.07
    weights /= weights.sum()
    collection = collection_create(name="bench synthetic", slug="bench-synthetic")
    batch = []
    started = time.perf_counter()
    for i in range(n):
        body = vocab[rng.choice(WORDS, size=int(rng.integers(20, 200)), p=weights)]
        title = vocab[rng.choice(WORDS, size=int(rng.integers(5, 12)), p=weights)]
        batch.append(AnswerRecord(f"s{i}", " ".join(title), " ".join(body)))
    from corpus.services import answers_upsert

    answers_upsert(collection=collection, records=batch)
    print(f"\n## synthetic: {n} answers inserted in {time.perf_counter() - started:.1f} s")
    return collection


def synthetic_part(collection: Collection, model_file: str | None, seed: int = 1) -> None:
    clear_ranker_caches()
    before_rss, before_peak = rss_mb(), peak_mb()
    started = time.perf_counter()
    index = build_index(collection=collection)
    build_s = time.perf_counter() - started
    path = save_index(index)
    size_mb = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20
    print(
        f"index build: {build_s:.1f} s; RSS +{rss_mb() - before_rss:.0f} MB "
        f"(peak +{max(peak_mb() - before_peak, 0):.0f} MB); on disk {size_mb:.0f} MB"
    )
    del index
    started = time.perf_counter()
    loaded = read_index(collection_id=collection.pk, path=path)
    print(f"index load from disk: {time.perf_counter() - started:.2f} s")
    rng = np.random.default_rng(seed)
    vocab_words = [f"w{i:05d}x" for i in range(2000)]  # common-ish words, so queries match many answers
    queries = [
        RankQuery(f"q{i}", " ".join(rng.choice(vocab_words, size=int(rng.integers(2, 6)))))
        for i in range(300)
    ]
    bm25 = BuiltinBackend(collection=collection, index=loaded)
    _, bm25_ms = timed_ranks(bm25, queries, repeats=1)
    print(f"BM25 rank (k=10): {percentiles(bm25_ms)}")
    if model_file:
        reranked = BuiltinBackend(collection=collection, index=loaded)
        reranked.model = RerankModel(model_path(model_file))
        _, rerank_ms = timed_ranks(reranked, queries, repeats=1)
        print(
            f"reranked (100 candidates, Cranfield's model): {percentiles(rerank_ms)} "
            f"(ratio of p50 to BM25 {np.percentile(rerank_ms, 50) / np.percentile(bm25_ms, 50):.2f})"
        )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cranfield-original", type=Path)
    parser.add_argument("--synthetic", type=int, default=100_000)
    args = parser.parse_args()
    print(f"database: {connection.vendor}; MODEL_DIR {os.environ['MODEL_DIR']}; CPUs {os.cpu_count()}")
    Collection.objects.filter(slug__startswith="bench-").delete()
    created = []
    try:
        demo = demo_collection_load(slug="bench-cranfield")
        created.append(demo)
        # The split hashes the slug: give the questions the split they have in the app's "cranfield" demo.
        for question in demo.questions.all():
            question.split = split_for(
                collection_slug="cranfield", external_id=question.external_id, test_fraction=0.3
            )
            question.save(update_fields=["split"])
        version = cranfield_part(demo, "Cranfield, R&R demo edition")
        if args.cranfield_original:
            original = original_cranfield(args.cranfield_original)
            created.append(original)
            cranfield_part(original, "Cranfield, original 225 queries")
        if args.synthetic:
            collection = synthetic(args.synthetic)
            created.append(collection)
            synthetic_part(collection, version.model_file or None)
    finally:
        for collection in created:
            collection.delete()
        shutil.rmtree(os.environ["MODEL_DIR"], ignore_errors=True)


if __name__ == "__main__":
    main()
