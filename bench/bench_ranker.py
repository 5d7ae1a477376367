"""Benchmark of the builtin ranker against issue 11's goal, through the app's own code paths.

Issue 11's goal: a version trained from ratings beats plain BM25 by at least +0.03 NDCG@10 with p < 0.05
on the TEST questions of both Cranfield editions, training in at most 30 s on 2 cores with the answer
embeddings already computed.

Per edition (the R&R demo, 150 questions, ``trainer.services.demo_collection_load``; and, with
--cranfield-original DIR, the original 225 queries), with the app's split rule:

* the ranker is made by ``rankers.services.ranker_create`` (its champion v1 is plain BM25) and trained
  by ``trainer.services.ranker_train`` (cross-validation over the candidates, the guard on);
* test NDCG@10 of v1 and of the trained version, the difference with its 95% CI and p, all from
  ``evaluation.services.versions_compare(challenger=..., champion=...)``, as the training loop does;
  the same for an untrained fusion version (method "fusion", z(bm25) + z(cosine), weights 0.5/0.5)
  against v1, and for the trained version against that fusion;
* the method training chose, every candidate's CV NDCG@10 and spread, and ``details["ratings_added"]``
  (the best candidate that learned from ratings against the untrained fusion, in cross-validation);
* a learning curve: the trained version's test gain over v1 with 25%, 50% and 100% of the labelled
  training questions (random subsets; the other training questions' labels and ratings are deleted
  in a transaction that is rolled back). Training is deterministic, so 100% is one run;
* timings: BM25 index build and memory, the 1,400 answer embeddings from scratch (demo edition),
  training with the embeddings cached, rank latency p50/p99 of v1 and of the trained version on the
  test questions (the first repetition encodes each question; the others find its vector cached).

Then a synthetic collection of --synthetic answers (default 100,000): BM25 index build time and memory,
BM25 rank latency, and the embedding throughput measured on --embed-sample answers (default 2,000),
EXTRAPOLATED to the whole collection (not measured).

Embeddings are cached under --embeddings-cache (default $TMPDIR/rank-trainer-bench-embeddings, one
sub-directory per edition), which the bench uses as settings.EMBEDDINGS_DIR: a rerun reuses the
vectors (the app copies unchanged texts' vectors from the latest earlier state), so only the first run
pays for encoding each edition. The from-scratch timing always encodes the demo edition again, in a
temporary directory (--skip-cold-embeddings leaves it out). Collections are created under bench-*
slugs and deleted at the end; MODEL_DIR is a temporary directory (deleted at the end) unless set.

    DEBUG=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/wt_bench REDIS_URL=redis://127.0.0.1:6379/8 \\
        LOG_LEVEL=WARNING .venv/bin/python bench/bench_ranker.py \\
        --cranfield-original /work/shared/data/cranfield-original
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
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
# A temporary MODEL_DIR, made (and deleted at the end) only when none is set: never delete the caller's.
OWN_MODEL_DIR = "MODEL_DIR" not in os.environ
if OWN_MODEL_DIR:
    os.environ["MODEL_DIR"] = tempfile.mkdtemp(prefix="bench-ranker-")

import django  # noqa: E402

django.setup()

from django.db import connection, transaction  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord  # noqa: E402
from corpus.models import Collection  # noqa: E402
from corpus.selectors import test_questions  # noqa: E402
from corpus.services import answers_upsert, collection_create, split_for  # noqa: E402
from evaluation.services import VersionComparison, versions_compare  # noqa: E402
from rankers.backends import RankQuery, get_backend  # noqa: E402
from rankers.builtin import BuiltinBackend, clear_ranker_caches  # noqa: E402
from rankers.embedding import load_encoder  # noqa: E402
from rankers.index import build_index, load_index, read_index, save_index  # noqa: E402
from rankers.models import RankerVersion  # noqa: E402
from rankers.semantic import BATCH_SIZE, answer_text, embeddings_build_now, forget_vectors  # noqa: E402
from rankers.services import ranker_create  # noqa: E402
from ratings.models import Label, Rating  # noqa: E402
from trainer.learner import training_questions  # noqa: E402
from trainer.services import collection_import, demo_collection_load, ranker_train  # noqa: E402

DEFAULT_CACHE = Path(tempfile.gettempdir()) / "rank-trainer-bench-embeddings"
FUSION_PARAMS = {"signals": ["bm25", "cosine"], "weights": [0.5, 0.5]}
GOAL_GAIN = 0.03
GOAL_P = 0.05
GOAL_TRAIN_SECONDS = 30.0


# --- measuring ------------------------------------------------------------------------------------


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


def ms(samples: list[float], q: float) -> float:
    return float(np.percentile(np.array(samples), q))


def timed_ranks(
    backend, queries: list[RankQuery], repeats: int, k: int = 10
) -> tuple[list[float], list[float]]:
    """(first-repetition samples, later repetitions' samples) in ms. Question vectors are forgotten before
    the first repetition, so it includes encoding each question (a question seen for the first time); the
    later ones find the question's vector in the process's cache."""
    first, later = [], []
    for r in range(repeats):
        if r == 0:
            forget_vectors()  # the backend keeps its own reference to the answer vectors
        for query in queries:
            started = time.perf_counter()
            backend.rank(query, k)
            (first if r == 0 else later).append((time.perf_counter() - started) * 1000)
    return first, later


def figures(c: VersionComparison) -> str:
    return f"{c.difference:+.4f} (95% CI {c.ci_low:+.4f} … {c.ci_high:+.4f}, p = {c.p_value:.4f})"


# --- data -----------------------------------------------------------------------------------------


def demo_edition() -> Collection:
    """The app's demo collection, with the split its questions have in the app's "cranfield" demo (the
    split hashes the slug, and this copy lives under another slug)."""
    collection = demo_collection_load(slug="bench-cranfield")
    assert collection is not None
    for question in collection.questions.all():
        question.split = split_for(
            collection_slug="cranfield", external_id=question.external_id, test_fraction=0.3
        )
        question.save(update_fields=["split"])
    return collection


def original_cranfield(
    directory: Path, *, name: str = "bench cranfield 225", slug: str = "bench-cranfield-225"
) -> Collection:
    """All 225 original queries; split by the app's own rule (stable hash of slug and id, 30% test).

    ``cranqrel`` codes: 1 (complete answer) → 3 stars, 2 → 2, 3 → 1, 4 and -1 → 0.
    """
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
    collection = collection_create(name=name, slug=slug)
    collection_import(
        collection=collection,
        answers=answers,
        questions=questions,
        judgments=[JudgmentRecord(q, d, s) for (q, d), s in judgments.items()],
    )
    return collection


# --- one edition ----------------------------------------------------------------------------------


@dataclass
class CurvePoint:
    fraction: float
    questions: int
    seed: int | None
    method: str
    difference: float
    p_value: float
    seconds: float


@dataclass
class EditionResult:
    name: str
    train_questions: int = 0
    test_questions: int = 0
    labels: int = 0
    trained: RankerVersion | None = None
    vs_bm25: VersionComparison | None = None
    fusion_vs_bm25: VersionComparison | None = None
    trained_vs_fusion: VersionComparison | None = None
    train_seconds: float = 0.0
    timings: dict[str, str] = field(default_factory=dict)
    curve: list[CurvePoint] = field(default_factory=list)


def drop_training_labels(collection: Collection, keep: set[int]) -> None:
    """Delete the ratings and labels of the training questions not in ``keep`` (call inside a transaction
    that is rolled back afterwards)."""
    drop = [q.pk for q in training_questions(collection=collection) if q.pk not in keep]
    Label.objects.filter(question_id__in=drop).delete()
    Rating.objects.filter(question_id__in=drop).delete()


class _Rollback(Exception):
    pass


def subset_training(
    ranker, champion: RankerVersion, keep: set[int]
) -> tuple[RankerVersion, VersionComparison, float]:
    """Train with only ``keep``'s training labels and compare with ``champion``; nothing is kept."""
    out: list = []
    try:
        with transaction.atomic():
            drop_training_labels(ranker.collection, keep)
            started = time.perf_counter()
            version = ranker_train(ranker=ranker)
            seconds = time.perf_counter() - started
            # A rolled-back version's label is reused by the next one, and so is its rated-questions file
            # name (no content hash): forget what the process cached under it (see bench/README.md).
            clear_ranker_caches()
            out = [version, versions_compare(challenger=version, champion=champion), seconds]
            raise _Rollback
    except _Rollback:
        pass
    return out[0], out[1], out[2]


def run_edition(collection: Collection, name: str, args, cache: Path, *, cold: bool) -> EditionResult:
    result = EditionResult(name=name)
    tests = list(test_questions(collection=collection))
    result.test_questions = len(tests)
    print(f"\n## {name}: {collection.answers.count()} answers, {load()}")

    clear_ranker_caches()
    before = rss_mb()
    started = time.perf_counter()
    index = load_index(collection=collection)
    result.timings["index build (BM25, 1,400 answers)"] = (
        f"{time.perf_counter() - started:.2f} s, RSS +{rss_mb() - before:.0f} MB ({load()})"
    )
    print(f"index build: {result.timings['index build (BM25, 1,400 answers)']}")

    if cold:
        # From scratch, in an empty directory, rolled back so the build row does not outlive the files.
        cold_dir = Path(tempfile.mkdtemp(prefix="bench-embeddings-cold-"))
        before = rss_mb()
        try:
            with override_settings(EMBEDDINGS_DIR=cold_dir), transaction.atomic():
                forget_vectors()
                started = time.perf_counter()
                vectors = embeddings_build_now(collection=collection, index=index)
                seconds = time.perf_counter() - started
                transaction.set_rollback(True)
        finally:
            shutil.rmtree(cold_dir, ignore_errors=True)
        forget_vectors()
        result.timings["answer embeddings from scratch"] = (
            f"{seconds:.1f} s for {len(vectors)} answers ({seconds / len(vectors) * 1000:.1f} ms per answer), "
            f"RSS +{rss_mb() - before:.0f} MB with the model loaded; vectors {vectors.nbytes / 2**20:.1f} MB "
            f"({load()})"
        )
        print(f"answer embeddings from scratch: {result.timings['answer embeddings from scratch']}")

    with override_settings(EMBEDDINGS_DIR=cache):
        started = time.perf_counter()
        embeddings_build_now(collection=collection, index=index)
        result.timings["answer embeddings, from the bench cache"] = (
            f"{time.perf_counter() - started:.1f} s ({load()})"
        )
        print(f"answer embeddings from {cache}: {result.timings['answer embeddings, from the bench cache']}")

        ranker = ranker_create(collection=collection, name="bench", kind="builtin")
        bm25 = ranker.champion
        assert bm25 is not None and bm25.method == "bm25"
        load_before = load()
        started = time.perf_counter()
        version = ranker_train(ranker=ranker)
        result.train_seconds = time.perf_counter() - started
        result.trained = version
        result.timings["training (embeddings cached)"] = (
            f"{result.train_seconds:.1f} s (learner's own figure {version.details.get('seconds')} s; "
            f"{load_before} before, {load()} after)"
        )
        details = version.details
        result.train_questions = details.get("training_questions", 0)
        result.labels = version.label_count
        print(
            f"training: {result.timings['training (embeddings cached)']}; {version.label_count} labels of "
            f"{result.train_questions} training questions ({details.get('learnable_questions')} learnable); "
            f"chose {version.method}"
        )
        if details.get("reason") or details.get("message"):
            print(f"  why: {details.get('reason', '')} {details.get('message', '')}".rstrip())

        fusion = RankerVersion.objects.create(
            ranker=ranker,
            label="untrained-fusion",
            method="fusion",
            uses_model=True,
            notes="z(bm25) + z(cosine), equal weights: needs no ratings.",
            details={"params": FUSION_PARAMS},
        )
        result.vs_bm25 = versions_compare(challenger=version, champion=bm25)
        result.fusion_vs_bm25 = versions_compare(challenger=fusion, champion=bm25)
        result.trained_vs_fusion = versions_compare(challenger=version, champion=fusion)
        print_edition(result)

        # Learning curve: the same ranker, fewer training questions' labels.
        labelled = [q.pk for q in training_questions(collection=collection)]
        result.curve.append(
            CurvePoint(
                1.0,
                len(labelled),
                None,
                version.method,
                result.vs_bm25.difference,
                result.vs_bm25.p_value,
                result.train_seconds,
            )
        )
        for fraction in (0.25, 0.5):
            count = max(2, round(fraction * len(labelled)))
            for seed in range(args.curve_seeds):
                keep = set(np.random.default_rng(seed).choice(labelled, size=count, replace=False).tolist())
                subset_version, comparison, seconds = subset_training(ranker, bm25, keep)
                point = CurvePoint(
                    fraction,
                    count,
                    seed,
                    subset_version.method,
                    comparison.difference,
                    comparison.p_value,
                    seconds,
                )
                result.curve.append(point)
                print(
                    f"  curve {fraction:.0%} ({count} q) seed {seed}: {subset_version.method}, "
                    f"{figures(comparison)}, {seconds:.1f} s"
                )
        print_curve(result)

        # Latency on the test questions: v1 against the trained version (and the untrained fusion).
        clear_ranker_caches()
        queries = [RankQuery(q.external_id, q.text) for q in tests]
        backends = {
            "BM25 (v1)": get_backend(ranker, bm25),
            f"trained {version.label} ({version.method})": get_backend(ranker, version),
            "untrained fusion": get_backend(ranker, fusion),
        }
        for backend in backends.values():
            backend.rank(queries[0], 10)  # warm: model and vectors loaded
        latency = {label: timed_ranks(b, queries, args.repeats) for label, b in backends.items()}
        reference = ms(latency["BM25 (v1)"][1], 50)
        print(f"\nrank latency, k = 10, {len(queries)} test questions × {args.repeats} ({load()}):")
        print(
            "| version | first sight (question encoded) p50 / p99 ms | repeated question p50 / p99 ms "
            "| p50 ÷ BM25's (repeated) |"
        )
        print("|---|---:|---:|---:|")
        for label, (first, later) in latency.items():
            print(
                f"| {label} | {ms(first, 50):.2f} / {ms(first, 99):.2f} | {ms(later, 50):.2f} / "
                f"{ms(later, 99):.2f} | ×{ms(later, 50) / reference:.1f} |"
            )
    return result


def print_edition(r: EditionResult) -> None:
    v, c = r.trained, r.vs_bm25
    assert (
        v is not None and c is not None and r.fusion_vs_bm25 is not None and r.trained_vs_fusion is not None
    )
    f = r.fusion_vs_bm25
    t = r.trained_vs_fusion
    print(
        f"\ntest questions with a relevant answer: {c.questions} of {r.test_questions}; "
        f"{r.train_questions} labelled training questions, {r.labels} labels"
    )
    print("| version | test NDCG@10 | ÷ BM25 | vs BM25 (95% CI, p) | verdict | questions better / worse |")
    print("|---|---:|---:|---|---|---|")
    print(f"| BM25 (v1, champion) | {c.champion_ndcg:.4f} | ×1.000 | | | |")
    print(
        f"| untrained fusion | {f.challenger_ndcg:.4f} | ×{f.challenger_ndcg / f.champion_ndcg:.3f} | "
        f"{figures(f)} | {f.verdict} | {f.improved} / {f.worsened} |"
    )
    print(
        f"| trained {v.label}: {v.method} | {c.challenger_ndcg:.4f} | ×{c.challenger_ndcg / c.champion_ndcg:.3f} | "
        f"{figures(c)} | {c.verdict} | {c.improved} / {c.worsened} |"
    )
    print(f"trained vs untrained fusion: {figures(t)}, {t.verdict}, {t.improved} / {t.worsened} questions")
    met = c.difference >= GOAL_GAIN and c.p_value < GOAL_P
    print(f"goal (≥ +{GOAL_GAIN} with p < {GOAL_P} over BM25): {'MET' if met else 'NOT met'}")
    print("\ncandidates (cross-validation on the training questions):")
    print("| candidate | learns from ratings | CV NDCG@10 | spread over fold assignments | chosen |")
    print("|---|---|---:|---:|---|")
    for row in v.details.get("candidates", []):
        print(
            f"| {row['name']} | {'yes' if row['trained'] else 'no'} | {row['cv_ndcg']:.4f} | "
            f"{row['spread']:.4f} | {'**chosen**' if row['chosen'] else ''} |"
        )
    added = v.details.get("ratings_added")
    if added:
        print(
            f"ratings added (CV): {added['candidate']} over {added['over']} {added['difference']:+.4f} "
            f"(95% CI {added['ci_low']:+.4f} … {added['ci_high']:+.4f}, p = {added['p_value']:.4f}, "
            f"{added['questions']} questions)"
        )
    cv = v.details.get("cv_vs_first_stage") or v.details.get("cv_vs_bm25")
    if cv:
        print(
            f"chosen vs BM25 (CV): {cv['difference']:+.4f} (95% CI {cv['ci_low']:+.4f} … {cv['ci_high']:+.4f}, "
            f"p = {cv['p_value']:.4f})"
        )


def print_curve(r: EditionResult) -> None:
    print("\nlearning curve: trained version's test NDCG@10 gain over BM25 (v1)")
    print(
        "| training questions labelled | runs | methods chosen | mean gain | sd | min … max | p per run | train s |"
    )
    print("|---|---:|---|---:|---:|---|---|---:|")
    for fraction in (0.25, 0.5, 1.0):
        points = [p for p in r.curve if p.fraction == fraction]
        gains = np.array([p.difference for p in points])
        methods = ", ".join(sorted({p.method for p in points}))
        print(
            f"| {fraction:.0%} ({points[0].questions}) | {len(points)} | {methods} | {gains.mean():+.4f} | "
            f"{gains.std():.4f} | {gains.min():+.4f} … {gains.max():+.4f} | "
            f"{', '.join(f'{p.p_value:.3f}' for p in points)} | {np.mean([p.seconds for p in points]):.1f} |"
        )


# --- synthetic ------------------------------------------------------------------------------------

WORDS = 30_000


def synthetic_records(n: int, seed: int = 0) -> list[AnswerRecord]:
    rng = np.random.default_rng(seed)
    # Zipf-distributed vocabulary of made-up words, answers of 20–200 terms with a 5–12 term title.
    vocab = np.array([f"w{i:05d}x" for i in range(WORDS)])
    weights = 1 / np.arange(1, WORDS + 1) ** 1.07
    weights /= weights.sum()
    records = []
    for i in range(n):
        body = vocab[rng.choice(WORDS, size=int(rng.integers(20, 200)), p=weights)]
        title = vocab[rng.choice(WORDS, size=int(rng.integers(5, 12)), p=weights)]
        records.append(AnswerRecord(f"s{i}", " ".join(title), " ".join(body)))
    return records


def synthetic_part(n: int, sample: int, cranfield_ms_per_answer: float | None) -> Collection:
    started = time.perf_counter()
    records = synthetic_records(n)
    collection = collection_create(name="bench synthetic", slug="bench-synthetic")
    answers_upsert(collection=collection, records=records)
    print(
        f"\n## synthetic: {n} answers generated and inserted in {time.perf_counter() - started:.1f} s ({load()})"
    )
    clear_ranker_caches()
    before_rss, before_peak = rss_mb(), peak_mb()
    started = time.perf_counter()
    index = build_index(collection=collection)
    build_s = time.perf_counter() - started
    path = save_index(index)
    size_mb = sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20
    print(
        f"BM25 index build: {build_s:.1f} s; RSS +{rss_mb() - before_rss:.0f} MB "
        f"(peak +{max(peak_mb() - before_peak, 0):.0f} MB); on disk {size_mb:.0f} MB ({load()})"
    )
    del index
    started = time.perf_counter()
    loaded = read_index(collection_id=collection.pk, path=path)
    print(f"index load from disk: {time.perf_counter() - started:.2f} s")
    rng = np.random.default_rng(1)
    words = [f"w{i:05d}x" for i in range(2000)]  # common-ish words, so queries match many answers
    queries = [
        RankQuery(f"q{i}", " ".join(rng.choice(words, size=int(rng.integers(2, 6))))) for i in range(300)
    ]
    samples, _ = timed_ranks(BuiltinBackend(collection=collection, index=loaded), queries, repeats=1)  # BM25
    print(f"BM25 rank, k = 10: p50 {ms(samples, 50):.2f} ms, p99 {ms(samples, 99):.2f} ms")

    if sample:
        encoder = load_encoder()
        texts = [answer_text(r.title, r.body) for r in records[:sample]]
        before = rss_mb()
        started = time.perf_counter()
        vectors = encoder.encode(texts, batch_size=BATCH_SIZE)
        seconds = time.perf_counter() - started
        per_answer = seconds / len(texts)
        print(
            f"embeddings, measured on {len(texts)} synthetic answers: {seconds:.1f} s, "
            f"{per_answer * 1000:.1f} ms per answer, {len(texts) / seconds:.0f} answers/s, "
            f"RSS +{rss_mb() - before:.0f} MB ({load()})"
        )
        print(
            f"EXTRAPOLATION (not measured) to {n} answers: {per_answer * n / 60:.0f} min on this machine's "
            f"2 cores; the matrix {n * vectors.shape[1] * 4 / 2**20:.0f} MB (float32)"
        )
        if cranfield_ms_per_answer:
            print(
                f"  from the Cranfield rate ({cranfield_ms_per_answer:.1f} ms per answer): "
                f"{cranfield_ms_per_answer / 1000 * n / 60:.0f} min (also an extrapolation)"
            )
    return collection


def prune_cache(directory: Path, keep: Collection) -> None:
    """Keep only this run's vectors of the edition: the next run reuses them, by text hash."""
    for other in directory.glob("collection-*"):
        if other.name != f"collection-{keep.pk}":
            shutil.rmtree(other, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        epilog="Embeddings are cached in --embeddings-cache (used as settings.EMBEDDINGS_DIR, one "
        "sub-directory per edition), so reruns skip encoding the answers; the from-scratch figure "
        "always encodes the demo edition again in a temporary directory unless --skip-cold-embeddings.",
    )
    parser.add_argument(
        "--cranfield-original", type=Path, help="directory of cran.all.1400, cran.qry, cranqrel"
    )
    parser.add_argument(
        "--embeddings-cache",
        type=Path,
        default=DEFAULT_CACHE,
        help=f"persistent EMBEDDINGS_DIR for the bench (default {DEFAULT_CACHE})",
    )
    parser.add_argument(
        "--skip-cold-embeddings", action="store_true", help="do not time embeddings from scratch"
    )
    parser.add_argument(
        "--curve-seeds", type=int, default=3, help="random subsets per learning-curve fraction"
    )
    parser.add_argument(
        "--repeats", type=int, default=4, help="repetitions of the test questions for latency"
    )
    parser.add_argument("--synthetic", type=int, default=100_000, help="synthetic answers (0: skip)")
    parser.add_argument(
        "--embed-sample", type=int, default=2000, help="synthetic answers to encode (0: skip)"
    )
    args = parser.parse_args()
    begun = time.perf_counter()
    print(
        f"database: {connection.vendor}; MODEL_DIR {os.environ['MODEL_DIR']}; embeddings cache "
        f"{args.embeddings_cache}; CPUs {os.cpu_count()}; {load()}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    Collection.objects.filter(slug__startswith="bench-").delete()
    created: list[Collection] = []
    results = []
    cranfield_rate = None
    try:
        demo = demo_edition()
        created.append(demo)
        cache = args.embeddings_cache / "cranfield-rr"
        results.append(
            run_edition(
                demo, "Cranfield, R&R demo edition (150 q)", args, cache, cold=not args.skip_cold_embeddings
            )
        )
        prune_cache(cache, demo)
        timing = results[0].timings.get("answer embeddings from scratch")
        if timing:
            cranfield_rate = float(timing.split("(")[1].split(" ms")[0])
        if args.cranfield_original:
            original = original_cranfield(args.cranfield_original)
            created.append(original)
            cache = args.embeddings_cache / "cranfield-original"
            results.append(run_edition(original, "Cranfield, original 225 queries", args, cache, cold=False))
            prune_cache(cache, original)
        if args.synthetic:
            created.append(synthetic_part(args.synthetic, args.embed_sample, cranfield_rate))
    finally:
        for collection in created:
            collection.delete()
        if OWN_MODEL_DIR:
            shutil.rmtree(os.environ["MODEL_DIR"], ignore_errors=True)
    print("\n## summary")
    for r in results:
        c = r.vs_bm25
        assert c is not None
        met = c.difference >= GOAL_GAIN and c.p_value < GOAL_P
        print(
            f"- {r.name}: trained ({r.trained.method if r.trained else '?'}) vs BM25 {figures(c)}: goal "
            f"{'MET' if met else 'NOT met'}; training {r.train_seconds:.1f} s "
            f"({'within' if r.train_seconds <= GOAL_TRAIN_SECONDS else 'over'} {GOAL_TRAIN_SECONDS:.0f} s)"
        )
    print(f"peak RSS {peak_mb():.0f} MB; total {time.perf_counter() - begun:.0f} s; {load()}")


if __name__ == "__main__":
    main()
