"""Learning from the product's own loop (issue 23 §3): simulated raters, the real queue, the real training.

bench_ranker trains on COMPLETE judgments, which no user has. This bench measures what a user gets: per
collection, two or more simulated raters (--raters) work through the app's rating queue exactly as the
rating page does, and a trainer presses Train after each round (--rounds):

* **rating**: each rater asks ``raters.next_task.picking.next_task`` for their next question (what the rating page's
  *Next question* calls, ``raters.views.next_question.rate_next``: ``?after=`` the question just done, then without it),
  and rates every answer the task shows, in the page's order, through ``ratings.services.rating_record``
  (what each star click calls, ``raters.views.pair.rate_answer``). A rater answers from the collection's
  judgments: the judged grade as stars (Cranfield: the loaders' mapping; outside collections:
  ``../shared/data/outside/README.md``, binary 1 → 3 stars, graded 0/1/2 → 0/2/3), an answer the
  judgments don't list for the question → 0 stars. Raters take turns a page at a time. A round stops when
  its share of the budget is spent (--budget ratings per question, training and test alike, over all
  rounds, default 20, as the collection's rating budget; split evenly over the rounds; what a round
  leaves unspent carries over) or when the queue offers no rater anything;
* **training**: ``trainer.services.training_start`` (what the Rankers page's *Train new version* button
  calls: readiness check, job row), then ``trainer.services.training_run`` run in this process, the
  function the Celery task ``trainer.training_run`` calls: ``ranker_train`` (the learner), the gate
  ``version_decide`` (``versions_compare`` on the test questions with the app's labels, the ranker's
  promotion policy) and the promotion. The evaluation a promotion queues is run here too, as a worker
  would (``evaluation.services.run_plan`` then ``chunk_evaluate``), since the queue reads its results.

The ranker is the collection's default builtin ranker made by ``rankers.services.ranker_create`` (its
first champion is whatever that makes). Nothing about the queue or the learner is reimplemented here.

**Truth** is the test questions' complete judgments (unlisted answers 0 stars), never the app's labels.
After each round, on the test questions with a relevant answer: NDCG@10 (the app's own scoring,
``evaluation.services.score_rankings``, the collection's metric definition) of the champion, of BM25, of
the untrained fusion z(bm25) + z(cosine) (a "fusion" version, as ``trainer.learner`` makes it) and of the
**upper bound** (a version trained by ``ranker_train`` on every judgment of the training questions, as
bench_ranker does, completed as the raters answer: an unlisted answer among the BM25 candidates the
learner reranks is 0 stars; trained once before any rating, its labels then deleted), each with a percentile
bootstrap 95% CI over questions (``evaluation.metrics.stats.bootstrap_ci``); the champion minus the best
untrained one (BM25 or fusion, whichever is higher on the truth) with its paired randomization p
(``compare_runs``); every promotion of the round against the champion it replaced, on the truth
(significantly worse: p < 0.05 and below); and the share of the upper-bound gap (upper − fusion) the
champion closes. The reference versions live on a second, non-default ranker so that the product's
ranker, its version numbering and its queue never see them.

Collections (--collections, default all): ``cranfield-rr`` (the R&R demo edition, 150 questions, split
as in the app's ``cranfield`` demo, ``bench_ranker.demo_edition``), ``cranfield-original`` (225 queries,
``bench_ranker.original_cranfield``, the app's split rule on bench_ranker's slug, so both editions have
bench_ranker's split) and every folder of --outside (default ../shared/data/outside): answers.tsv,
questions.tsv, qrels.tsv; those have no split, so questions are split by a hash of --seed and the
question id, --test-fraction (default 0.5) to test. --quick (a smoke run, about 20 s) keeps 60 questions
of adi and covidfaq.

**Engine rankers** (issue 25, ``--engine opensearch|solr``): the product's ranker is an ``engine`` ranker
(preset ``opensearch`` or ``solr``) over a real node this bench starts, one per collection, as the tests
do (``tests/rankers/real_engines.py``: the launcher in ``engines/``, built by ``make engines``; the node
exits with this process; with ``--engine-url``, a node running already, e.g. the tests' session node, in
an index of the bench's own there, removed at the end), with the collection's answers indexed through the
node's HTTP API (``id``, ``title``, ``text``: cranfield-rr the demo answers, ``real_engines.cranfield_answers()``; the others
their answers as imported, answers.tsv's text as ``text``, no title). It is the collection's default
ranker, so the queue pools its versions' top k as the app does (``raters.next_task.pool``). Its v1 is the
engine as it is (``trainer.services.service_version_ensure``, what the first Train would make it,
made here so that round 1 has a champion to report); a training reranks the engine's top
``candidates`` (50) answers (``trainer.learner.engine_stage``). The references, on a second engine
ranker with the same config: the **engine alone** (its v1), the engine's **untrained fusion**
z(engine) + z(cosine) (a ``fusion`` version with signals engine and cosine, as the learner makes it) and
the **upper bound** (``ranker_train`` of that ranker on every judgment of the training questions,
completed with 0 stars for the unlisted answers among the engine's top 50). The gap closed is then
measured from the best untrained one (the engine or its fusion), not from the fusion.

The database: SQLite in a private temporary directory (also the filesystem broker and the cache, so no
running worker sees this bench's messages), migrated at the start and deleted at the end, and a fresh
one per collection (each in a child process): the queue orders equally urgent questions and shuffles a
page's answers by a hash of the rater's and the question's database ids, so in a shared database a
collection's figures would depend on what ran before it. With DATABASE_URL (and REDIS_URL) set, that
database instead, all collections in it (bench-loop-* slugs, and bench_ranker's two Cranfield slugs:
not while bench_ranker runs on the same database), deleted at the start and the end. Answer embeddings
are cached under --embeddings-cache (default as bench_ranker's), one directory per collection, so only
the first run encodes them.

    .venv/bin/python bench/bench_loop.py --collections covidfaq,adi,cisi
    .venv/bin/python bench/bench_loop.py --quick            # smoke run: adi and covidfaq, 60 questions
    .venv/bin/python bench/bench_loop.py --engine opensearch --collections cranfield-rr   # make engines first
    .venv/bin/python bin/test_services -- .venv/bin/python bench/bench_loop.py   # PostgreSQL and Redis
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import httpx
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
# The app's var directory (SQLite unless DATABASE_URL, the filesystem broker unless REDIS_URL, the cache)
# is this bench's own: nothing another session runs sees its database or its task messages.
VAR_DIR = tempfile.mkdtemp(prefix="bench-loop-")
os.environ["RANK_TRAINER_VAR_DIR"] = VAR_DIR
os.environ.setdefault("MODEL_DIR", str(Path(VAR_DIR) / "models"))
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("SECRET_KEY", "bench")
os.environ.setdefault("LOG_LEVEL", "WARNING")
# --engine: the bench's own node listens on loopback, which the outbound check refuses unless allowed.
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE", "1")
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402

call_command("migrate", verbosity=0, interactive=False)

from bench_ranker import DEFAULT_CACHE, FUSION_PARAMS, demo_edition, original_cranfield  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord  # noqa: E402
from corpus.models import Answer, Collection, Question, Role, Split  # noqa: E402
from corpus.selectors import test_questions  # noqa: E402
from corpus.services import collection_create, membership_set  # noqa: E402
from evaluation.metrics.stats import bootstrap_ci, compare_runs  # noqa: E402
from evaluation.models import EvaluationRun, RunStatus  # noqa: E402
from evaluation.services import chunk_evaluate, run_plan, score_rankings  # noqa: E402
from rankers.backends import RankQuery, get_backend, service_backend  # noqa: E402
from rankers.builtin import clear_ranker_caches  # noqa: E402
from rankers.engine_config import rerank_settings  # noqa: E402
from rankers.fusion import UNTRAINED_FUSION_WEIGHTS  # noqa: E402
from rankers.index import load_index  # noqa: E402
from rankers.models import PromotionPolicy, Ranker, RankerVersion  # noqa: E402
from rankers.semantic import embeddings_build_now  # noqa: E402
from rankers.services import ranker_create, ranker_training_settings_set  # noqa: E402
from raters.next_task import pool  # noqa: E402
from raters.next_task.picking import next_task  # noqa: E402
from ratings.models import Label, Rating  # noqa: E402
from ratings.services import label_changes_mark, rating_record  # noqa: E402
from trainer import services as trainer_services  # noqa: E402
from trainer.services import (  # noqa: E402
    TrainingRefused,
    collection_import,
    ranker_train,
    service_version_ensure,
    training_start,
)

DEFAULT_OUTSIDE = ROOT.parent / "shared" / "data" / "outside"
DEFAULT_CRANFIELD_ORIGINAL = ROOT.parent / "shared" / "data" / "cranfield-original"
CRANFIELD = ("cranfield-rr", "cranfield-original")
WORKER = "bench-loop"
SLUG_PREFIX = "bench-loop-"
RESAMPLES = 5000
ALPHA = 0.05
QUICK_QUESTIONS = 60
QUICK_COLLECTIONS = ("adi", "covidfaq")


@dataclass
class RoundState:
    """What a round hook sees after a round's rating, training and truth figures (bench_definitions)."""

    number: int
    collection: Collection
    ranker: Ranker  # the product's ranker
    reference: Ranker  # the references' ranker, which the queue, the gate and the numbering never see
    references: dict[str, RankerVersion]  # "bm25" (or the engine alone), "fusion", "upper"
    scorer: TruthScorer
    truth: Truth


# Called after every round with its RoundState (a companion bench measures there without copying the loop).
ROUND_HOOKS: list = []


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load {one:.1f}/{five:.1f}"


def code_version() -> str:
    if os.environ.get("BENCH_LOOP_CODE"):
        return os.environ["BENCH_LOOP_CODE"]
    try:
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown (not a git checkout)"
    return f"{head}{' + uncommitted changes' if dirty else ''}"


# --- collections ----------------------------------------------------------------------------------

Truth = dict[str, dict[str, int]]  # question external id -> {answer external id: stars} (judged pairs)


def _hash_position(*parts: object) -> float:
    digest = hashlib.sha256("\x00".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def _read_tsv(path: Path) -> list[list[str]]:
    return [line.split("\t") for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def outside_collection(directory: Path, *, seed: int, test_fraction: float) -> tuple[Collection, Truth]:
    """An outside collection, imported without its judgments (the raters start from nothing); the split is
    a hash of the seed and the question id."""
    name = directory.name
    answers = [
        AnswerRecord(row[0], "", row[1] if len(row) > 1 else "")
        for row in _read_tsv(directory / "answers.tsv")
    ]
    questions = [
        QuestionRecord(
            row[0],
            row[1] if len(row) > 1 else "",
            Split.TEST if _hash_position("bench-loop", seed, name, row[0]) < test_fraction else Split.TRAIN,
        )
        for row in _read_tsv(directory / "questions.tsv")
    ]
    qrels = [(row[0], row[1], int(row[2])) for row in _read_tsv(directory / "qrels.tsv")]
    graded = max((g for _, _, g in qrels), default=0) > 1
    # ../shared/data/outside/README.md: binary 1 → 3 stars; graded 0/1/2 → 0/2/3 stars.
    stars_of = {0: 0, 1: 2, 2: 3} if graded else {0: 0, 1: 3}
    truth: Truth = {}
    for qid, aid, grade in qrels:
        truth.setdefault(qid, {})[aid] = stars_of[grade]
    collection = collection_create(name=f"bench loop {name}", slug=f"{SLUG_PREFIX}{name}")
    collection_import(collection=collection, answers=answers, questions=questions)
    return collection, truth


def cranfield_collection(name: str) -> tuple[Collection, Truth]:
    """A Cranfield edition by bench_ranker's loaders (which import the judgments as ratings), under their
    slugs, so the split (and the upper bound) is bench_ranker's: the labels are kept as the truth, then
    every rating and label is deleted, so the raters start from nothing."""
    collection = demo_edition() if name == "cranfield-rr" else original_cranfield(DEFAULT_CRANFIELD_ORIGINAL)
    truth: Truth = {}
    for qid, aid, gain in Label.objects.filter(question__collection=collection).values_list(
        "question__external_id", "answer__external_id", "gain"
    ):
        truth.setdefault(qid, {})[aid] = gain
    Rating.objects.filter(question__collection=collection).delete()
    Label.objects.filter(question__collection=collection).delete()
    label_changes_mark(
        question_ids=Question.objects.filter(collection=collection).values_list("pk", flat=True)
    )
    return collection, truth


def keep_questions(collection: Collection, *, limit: int, seed: int) -> None:
    """--quick: keep ``limit`` questions (a hash of the seed picks them), the others deleted."""
    ids = list(Question.objects.filter(collection=collection).values_list("pk", "external_id"))
    if len(ids) <= limit:
        return
    ranked = sorted(ids, key=lambda row: _hash_position("quick", seed, row[1]))
    Question.objects.filter(pk__in=[pk for pk, _ in ranked[limit:]]).delete()


# --- engine rankers (--engine) --------------------------------------------------------------------

ENGINE_INDEX = "answers"  # the OpenSearch index / Solr core holding the collection's answers
ENGINE_TITLES = {"opensearch": "OpenSearch", "solr": "Solr"}


@dataclass
class EngineNode:
    """A node this bench started, holding one collection's answers; ``config`` is the engine ranker's."""

    engine: str
    node: Any  # tests.rankers.real_engines.EngineNode
    config: dict[str, Any]
    index_seconds: float

    def stop(self) -> None:
        self.node.stop()


def engine_documents(collection: Collection, name: str) -> list[dict[str, str]]:
    """What the node indexes: ``id``, ``title``, ``text`` of each answer (cranfield-rr: the demo answers as
    the engine tests index them; the others: the collection's answers as imported)."""
    if name == "cranfield-rr":
        from tests.rankers.real_engines import cranfield_answers

        return cranfield_answers()
    rows = (
        Answer.objects.filter(collection=collection)
        .order_by("pk")
        .values_list("external_id", "title", "body")
    )
    return [{"id": aid, "title": title, "text": body} for aid, title, body in rows]


def _engine_check(response: httpx.Response) -> dict:
    if response.status_code != 200:
        raise RuntimeError(
            f"{response.request.method} {response.request.url}: {response.status_code} {response.text[:500]}"
        )
    return response.json()


def opensearch_index(url: str, index: str, documents: list[dict[str, str]]) -> None:
    """An index of ``documents`` as the tests' ``opensearch_index_cranfield`` makes it: one shard,
    ``english`` analyzer on ``title`` and ``text``."""
    english = {"type": "text", "analyzer": "english"}
    _engine_check(
        httpx.put(
            f"{url}/{index}",
            json={
                "settings": {"number_of_shards": 1, "number_of_replicas": 0},
                "mappings": {"properties": {"title": english, "text": english}},
            },
            timeout=60,
        )
    )
    lines = []
    for doc in documents:
        lines.append(json.dumps({"index": {"_id": doc["id"]}}))
        lines.append(json.dumps({"title": doc["title"], "text": doc["text"]}))
    result = _engine_check(
        httpx.post(
            f"{url}/{index}/_bulk?refresh=true",
            content=("\n".join(lines) + "\n").encode(),
            headers={"Content-Type": "application/x-ndjson"},
            timeout=300,
        )
    )
    if result["errors"]:
        raise RuntimeError(f"OpenSearch refused some answers: {json.dumps(result)[:1000]}")


def solr_index(url: str, core: str, documents: list[dict[str, str]]) -> None:
    """A core of ``documents`` as the tests' ``solr_index_cranfield`` makes it (configset ``answers``)."""
    _engine_check(
        httpx.get(
            f"{url}/admin/cores",
            params={"action": "CREATE", "name": core, "configSet": "answers"},
            timeout=60,
        )
    )
    _engine_check(httpx.post(f"{url}/{core}/update?commit=true", json=documents, timeout=300))


@dataclass
class RunningNode:
    """A node running already (--engine-url): the answers go into an index (core) of this bench's own
    there, which ``stop`` removes."""

    engine: str
    url: str
    index: str
    start_seconds: float = 0.0

    def stop(self) -> None:
        if self.engine == "opensearch":
            response = httpx.delete(f"{self.url}/{self.index}", timeout=60)
        else:
            params = {"action": "UNLOAD", "core": self.index, "deleteInstanceDir": "true"}
            response = httpx.get(f"{self.url}/admin/cores", params=params, timeout=60)
        _engine_check(response)


def engine_attach(engine: str, url: str, documents: list[dict[str, str]]) -> EngineNode:
    """``documents`` indexed on the node running at ``url``, in an index (core) named by this process."""
    node = RunningNode(engine, url.rstrip("/"), f"{ENGINE_INDEX}-{os.getpid()}")
    return _engine_index(engine, node, node.index, documents)


def engine_start(engine: str, home: Path, documents: list[dict[str, str]]) -> EngineNode:
    """A real node of ``engine`` started as the tests start it, with ``documents`` indexed."""
    from tests.rankers import real_engines as real

    if engine == "opensearch":
        command = real.java_command("opensearch", "OpenSearchNode", str(real.free_port()), str(home))
    else:
        home.mkdir(parents=True, exist_ok=True)
        configsets = home.parent / f"{home.name}-configsets"  # a copy: an export adds its vector field
        shutil.copytree(real.ENGINES / "solr" / "configsets", configsets)
        command = real.java_command("solr", "SolrNode", str(real.free_port()), str(home), str(configsets))
    return _engine_index(
        engine, real.start_node(ENGINE_TITLES[engine], home, command), ENGINE_INDEX, documents
    )


def _engine_index(engine: str, node: Any, index: str, documents: list[dict[str, str]]) -> EngineNode:
    """``documents`` indexed in ``index`` of ``node`` (stopped if that fails)."""
    try:
        started = time.perf_counter()
        if engine == "opensearch":
            opensearch_index(node.url, index, documents)
            config = {"preset": "opensearch", "url": f"{node.url}/{index}/_search"}
        else:
            solr_index(node.url, index, documents)
            config = {"preset": "solr", "url": f"{node.url}/{index}/select"}
        return EngineNode(engine, node, config, time.perf_counter() - started)
    except BaseException:
        node.stop()
        raise


# --- measuring on the truth -----------------------------------------------------------------------


class TruthScorer:
    """NDCG@k of a version on the test questions that have a relevant answer, scored with the truth by the
    app's own metrics engine under the collection's metric definition."""

    def __init__(self, collection: Collection, truth: Truth) -> None:
        self.collection = collection
        self.questions = [
            q
            for q in test_questions(collection=collection)
            if any(s > 0 for s in truth.get(q.external_id, {}).values())
        ]
        self.labels = [truth.get(q.external_id, {}) for q in self.questions]
        self.definition = EvaluationRun(
            ndcg_k=collection.ndcg_k,
            gain_scheme=collection.gain_scheme,
            discount=collection.discount,
            relevance_threshold=collection.relevance_threshold,
            accuracy_k=collection.accuracy_k,
        )
        self._cache: dict[int, np.ndarray] = {}

    def ndcg(self, version: RankerVersion) -> np.ndarray:
        if version.pk not in self._cache:
            backend = get_backend(version.ranker, version)
            k = self.collection.ndcg_k
            rankings = [backend.rank(RankQuery(q.external_id, q.text), k).ids for q in self.questions]
            close = getattr(getattr(backend, "first", backend), "close", None)  # an engine's connections
            if close is not None:
                close()
            scored = score_rankings(run=self.definition, rankings=rankings, labels=self.labels)
            self._cache[version.pk] = np.asarray(scored.ndcg, dtype=float)
        return self._cache[version.pk]


def ci_text(values: np.ndarray) -> str:
    ci = bootstrap_ci(values, n_resamples=RESAMPLES, seed=0)
    return f"{ci.mean:.4f} ({ci.low:.4f} … {ci.high:.4f})"


def diff_text(a: np.ndarray, b: np.ndarray) -> tuple[str, float, float]:
    c = compare_runs(a, b, n_resamples=RESAMPLES, n_permutations=RESAMPLES, seed=0)
    return (
        f"{c.difference:+.4f} ({c.ci_low:+.4f} … {c.ci_high:+.4f}), p = {c.p_value:.4f}",
        c.difference,
        c.p_value,
    )


# --- the loop -------------------------------------------------------------------------------------


@dataclass
class RoundResult:
    number: int
    ratings: int = 0
    cumulative: int = 0
    by_split: dict[str, int] = field(default_factory=dict)
    by_priority: dict[str, int] = field(default_factory=dict)  # the queue's priority (str) -> ratings
    queue_dry: bool = False
    rating_seconds: float = 0.0
    training: str = ""
    decision: str = ""  # short: the training's outcome, for the summary table
    training_seconds: float = 0.0
    champion: str = ""
    champion_ndcg: str = ""
    vs_best: str = ""
    vs_best_diff: float = math.nan
    vs_best_p: float = math.nan
    promotions: list[str] = field(default_factory=list)
    worse: bool = False
    gap_closed: float = math.nan
    trained_ndcg: str = ""  # the version this round's training made, on the truth (promoted or not)
    vs_upper: str = ""  # champion − upper bound (95% CI), p


@dataclass
class CollectionResult:
    name: str
    answers: int = 0
    train_questions: int = 0
    test_questions: int = 0
    scored_questions: int = 0
    budget: int = 0
    bm25: str = ""
    fusion: str = ""
    upper: str = ""
    upper_method: str = ""
    upper_vs_fusion: str = ""  # upper bound − untrained fusion (95% CI), p: is there a gap to close?
    best_untrained: str = ""
    # --engine: the first stage is the engine (``bm25`` then holds the engine alone's figure) and the gap is
    # measured from the best untrained one (``upper_vs_fusion``: upper − best untrained).
    first_stage: str = "BM25"
    engine_seconds: float = 0.0  # the node's start and indexing
    setup_seconds: float = 0.0
    seconds: float = 0.0
    rounds: list[RoundResult] = field(default_factory=list)


def rate_round(
    collection: Collection,
    raters: list,
    truth: Truth,
    budget: int,
    last: dict[int, int | None],
    result: RoundResult,
) -> None:
    """Raters take turns, a page (task) at a time, until ``budget`` ratings are saved or the queue offers
    no rater anything. Each task is what ``raters.views.next_question.rate_next`` would redirect to."""
    questions = {q.pk: q for q in Question.objects.filter(collection=collection)}
    answers = {a.pk: a for a in Answer.objects.filter(collection=collection)}
    done: set[int] = set()
    while result.ratings < budget and len(done) < len(raters):
        for rater in raters:
            if rater.pk in done or result.ratings >= budget:
                continue
            after = last.get(rater.pk)
            exclude = [after] if after is not None else []
            task = next_task(collection=collection, rater=rater, exclude=exclude)
            if task is None and exclude:
                task = next_task(collection=collection, rater=rater)
            if task is None:
                done.add(rater.pk)
                continue
            question = questions[task.question_id]
            judged = truth.get(question.external_id, {})
            for answer_id in task.answer_ids:
                if result.ratings >= budget:
                    break
                answer = answers[answer_id]
                rating_record(
                    rater=rater, question=question, answer=answer, stars=judged.get(answer.external_id, 0)
                )
                result.ratings += 1
                result.by_split[question.split] = result.by_split.get(question.split, 0) + 1
                priority = str(task.priority)
                result.by_priority[priority] = result.by_priority.get(priority, 0) + 1
            last[rater.pk] = task.question_id
    result.queue_dry = result.ratings < budget


def run_pending_evaluations(ranker: Ranker) -> None:
    """What a worker does with the evaluation a promotion queued (tasks evaluation.run, evaluation.chunk)."""
    for run in EvaluationRun.objects.filter(ranker=ranker, status=RunStatus.PENDING).order_by("pk"):
        for chunk_id in run_plan(run_id=run.pk, worker=WORKER):
            chunk_evaluate(chunk_id=chunk_id, worker=WORKER, token=f"{WORKER}-{chunk_id}")


def train_round(ranker: Ranker, trainer, result: RoundResult) -> RankerVersion | None:
    """Press Train: the job is queued as the button does, then run here as the Celery task would."""
    started = time.perf_counter()
    try:
        training = training_start(ranker=ranker, created_by=trainer, trigger="ui")
    except TrainingRefused as exc:
        result.training, result.decision = f"refused: {exc}", "refused"
        return None
    finished = trainer_services.training_run(training_id=training.pk, worker=WORKER)
    assert finished is not None
    run_pending_evaluations(ranker)
    result.training_seconds = time.perf_counter() - started
    version = finished.version
    if finished.status != "succeeded":
        result.training, result.decision = f"{finished.status}: {finished.error}", finished.status
        if version is not None:
            result.decision += f" ({version.label} {version.method} made)"
        return version
    gate = (version.comparison or {}) if version else {}
    difference, p_value = gate.get("difference"), gate.get("p_value")
    gate_said = (
        f"gate (app labels, {gate.get('questions')} q) {difference:+.4f} p = {p_value:.3f}"
        if difference is not None and p_value is not None
        else f"no gate figures ({gate.get('questions', 0)} test questions rated)"
    )
    label = f"{version.label} {version.method} ({version.label_count} labels)" if version else "?"
    result.training = f"{label}: {finished.decision}; {gate_said}"
    result.decision = (
        f"{finished.decision} {version.label} {version.method}" if version else finished.decision
    )
    return version


def run_collection(name: str, args) -> CollectionResult:
    result = CollectionResult(name=name)
    begun = time.perf_counter()
    print(f"\n## {name} ({load()})", flush=True)
    if name in CRANFIELD:
        collection, truth = cranfield_collection(name)
    else:
        collection, truth = outside_collection(
            args.outside / name, seed=args.seed, test_fraction=args.test_fraction
        )
    if args.max_questions:
        keep_questions(collection, limit=args.max_questions, seed=args.seed)
    node = None
    try:
        if args.engine:
            started = time.perf_counter()
            documents = engine_documents(collection, name)
            if args.engine_url:
                node = engine_attach(args.engine, args.engine_url, documents)
                how = "running already"
            else:
                node = engine_start(args.engine, Path(tempfile.mkdtemp(dir=VAR_DIR)) / args.engine, documents)
                how = f"started in {node.node.start_seconds:.1f} s"
            result.engine_seconds = time.perf_counter() - started
            print(
                f"{ENGINE_TITLES[args.engine]} at {node.node.url}: {how}, "
                f"{len(documents)} answers indexed in {node.index_seconds:.1f} s",
                flush=True,
            )
        with override_settings(EMBEDDINGS_DIR=args.embeddings_cache / f"loop-{name}"):
            return _run(collection, truth, result, args, begun, node)
    finally:
        if node is not None:
            node.stop()
        collection.delete()
        clear_ranker_caches()


def _run(
    collection: Collection,
    truth: Truth,
    result: CollectionResult,
    args,
    begun: float,
    node: EngineNode | None = None,
) -> CollectionResult:
    index = load_index(collection=collection)
    started = time.perf_counter()
    embeddings_build_now(collection=collection, index=index)
    print(f"answer embeddings: {time.perf_counter() - started:.1f} s", flush=True)
    result.answers = collection.answers.count()
    train_qs = list(Question.objects.filter(collection=collection, split=Split.TRAIN))
    result.train_questions = len(train_qs)
    result.test_questions = Question.objects.filter(collection=collection, split=Split.TEST).count()
    result.budget = args.budget * (result.train_questions + result.test_questions)
    # The queue keeps to the same budget per question as the simulated raters spend.
    collection.rating_budget = args.budget
    collection.save(update_fields=["rating_budget"])
    if args.pool == "champion":
        # What the queue did before it pooled: the champion's top k only (for measuring the choice).
        pooled = pool.pooled_versions
        pool.pooled_versions = lambda *, ranker: pooled(ranker=ranker)[:1]  # type: ignore[assignment]

    # The product's ranker (the collection's default: the queue's candidates, the gate, promotions).
    if node is None:
        ranker = ranker_create(collection=collection, name="Builtin", kind="builtin", is_default=True)
    else:
        ranker = ranker_create(
            collection=collection,
            name=ENGINE_TITLES[node.engine],
            kind="engine",
            config=node.config,
            is_default=True,
        )
        # v1, the engine as it is: what the first Train makes champion (ranker_train), made now so that
        # round 1 has a champion; the queue pools the engine's top k either way.
        service_version_ensure(ranker=ranker)
        ranker.refresh_from_db()
    if args.policy:
        ranker = ranker_training_settings_set(
            ranker=ranker, promotion_policy=args.policy, auto_train_labels=None, auto_train_hours=None
        )
    first = RankerVersion.objects.get(pk=ranker.champion_id)
    # References, on a second ranker the product never uses.
    if node is None:
        reference = ranker_create(collection=collection, name="bench reference", kind="builtin")
        bm25 = RankerVersion.objects.create(ranker=reference, label="bench-bm25", method="bm25")
        fusion = RankerVersion.objects.create(
            ranker=reference,
            label="bench-untrained-fusion",
            method="fusion",
            uses_model=True,
            details={"params": FUSION_PARAMS},
        )
    else:
        reference = ranker_create(
            collection=collection, name="bench reference", kind="engine", config=node.config
        )
        bm25 = service_version_ensure(ranker=reference)  # the engine alone
        result.first_stage = "engine"
        fusion = RankerVersion.objects.create(
            ranker=reference,
            label="bench-untrained-fusion",
            method="fusion",
            uses_model=True,
            details={"params": {"signals": ["engine", "cosine"], "weights": list(UNTRAINED_FUSION_WEIGHTS)}},
        )
    # Upper bound: every judgment of the training questions, as bench_ranker trains, completed as the
    # raters answer (an answer the judgments don't list is 0 stars) over the candidates the learner
    # reranks (BM25's, or the engine's top 50), so a learner that reads an unrated answer as unknown sees
    # complete judgments too. Then the labels are forgotten.
    if node is None:
        depth = reference.config.get("candidates", 100)
        candidates = get_backend(reference, bm25)
    else:
        depth = rerank_settings(reference.config)[0]
        candidates = service_backend(reference)
    complete = []
    for q in train_qs:
        pairs = dict(truth.get(q.external_id, {}))
        for a in candidates.rank(RankQuery(q.external_id, q.text), depth).ids:
            pairs.setdefault(a, 0)
        complete += [JudgmentRecord(q.external_id, a, stars) for a, stars in pairs.items()]
    collection_import(collection=collection, judgments=complete)
    started = time.perf_counter()
    upper = ranker_train(ranker=reference)
    print(f"upper bound: {upper.method}, {upper.label_count} labels, {time.perf_counter() - started:.1f} s")
    Rating.objects.filter(question__collection=collection).delete()
    Label.objects.filter(question__collection=collection).delete()
    label_changes_mark(
        question_ids=Question.objects.filter(collection=collection).values_list("pk", flat=True)
    )

    scorer = TruthScorer(collection, truth)
    result.scored_questions = len(scorer.questions)
    ndcg_bm25, ndcg_fusion, ndcg_upper = scorer.ndcg(bm25), scorer.ndcg(fusion), scorer.ndcg(upper)
    result.bm25, result.fusion, result.upper = ci_text(ndcg_bm25), ci_text(ndcg_fusion), ci_text(ndcg_upper)
    result.upper_method = upper.method
    first_name = result.first_stage
    best_name, best = (
        ("fusion", ndcg_fusion)
        if np.nanmean(ndcg_fusion) >= np.nanmean(ndcg_bm25)
        else (first_name, ndcg_bm25)
    )
    result.best_untrained = best_name
    # The gap to close: from the untrained fusion (builtin: the first champion); an engine ranker's first
    # champion is the engine alone, so from the better of the two.
    gap_from_name, gap_from = ("fusion", ndcg_fusion) if node is None else (best_name, best)
    gap = float(np.nanmean(ndcg_upper) - np.nanmean(gap_from))
    print(
        f"{result.answers} answers; {result.train_questions} training / {result.test_questions} test questions "
        f"({result.scored_questions} with a relevant answer are scored); budget {result.budget} ratings; "
        f"first champion {first.label} ({first.method or 'engine'}) {ci_text(scorer.ndcg(first))}"
    )
    print(
        f"truth NDCG@10: {first_name} {result.bm25}; fusion {result.fusion}; upper ({upper.method}) {result.upper}"
    )
    result.upper_vs_fusion = diff_text(ndcg_upper, gap_from)[0]
    print(f"upper bound − {gap_from_name}: {result.upper_vs_fusion}")
    result.setup_seconds = time.perf_counter() - begun

    User = get_user_model()
    trainer, _ = User.objects.get_or_create(username=f"{SLUG_PREFIX}trainer")
    membership_set(collection=collection, user=trainer, role=Role.TRAINER)
    raters = []
    for n in range(1, args.raters + 1):
        rater, _ = User.objects.get_or_create(username=f"{SLUG_PREFIX}rater-{n}")
        membership_set(collection=collection, user=rater, role=Role.RATER)
        raters.append(rater)

    last: dict[int, int | None] = {}
    spent = 0
    for number in range(1, args.rounds + 1):
        r = RoundResult(number=number)
        target = round(result.budget * number / args.rounds)
        before = ranker.champion_id
        started = time.perf_counter()
        rate_round(collection, raters, truth, target - spent, last, r)
        r.rating_seconds = time.perf_counter() - started
        spent += r.ratings
        r.cumulative = spent
        trained = train_round(ranker, trainer, r)
        if trained is not None:
            ndcg_trained = scorer.ndcg(trained)
            r.trained_ndcg = f"{trained.label} {ci_text(ndcg_trained)}, {diff_text(ndcg_trained, best)[0]}"
        ranker.refresh_from_db()
        champion = RankerVersion.objects.get(pk=ranker.champion_id)
        ndcg_champion = scorer.ndcg(champion)
        r.champion = f"{champion.label} {champion.method or 'engine'}"
        r.champion_ndcg = ci_text(ndcg_champion)
        r.vs_best, r.vs_best_diff, r.vs_best_p = diff_text(ndcg_champion, best)
        r.vs_upper = diff_text(ndcg_champion, ndcg_upper)[0]
        if ranker.champion_id != before:
            previous = RankerVersion.objects.get(pk=before)
            said, diff, p = diff_text(ndcg_champion, scorer.ndcg(previous))
            worse = diff < 0 and p < ALPHA
            r.worse = r.worse or worse
            r.promotions.append(
                f"{previous.label} → {champion.label}: {said}{' SIGNIFICANTLY WORSE' if worse else ''}"
            )
        if gap > 0:
            r.gap_closed = (float(np.nanmean(ndcg_champion)) - float(np.nanmean(gap_from))) / gap
        result.rounds.append(r)
        for hook in ROUND_HOOKS:
            hook(
                RoundState(
                    number,
                    collection,
                    ranker,
                    reference,
                    {"bm25": bm25, "fusion": fusion, "upper": upper},
                    scorer,
                    truth,
                )
            )
        print(
            f"round {number}: {r.ratings} ratings ({dict(r.by_split)}; by queue priority "
            f"{dict(sorted(r.by_priority.items()))}), "
            f"{spent} in all = {spent / max(1, result.train_questions + result.test_questions):.1f} per question"
            f"{'; the queue ran dry' if r.queue_dry else ''}; rating {r.rating_seconds:.1f} s ({load()})",
            flush=True,
        )
        print(f"  train ({r.training_seconds:.1f} s): {r.training}")
        if r.trained_ndcg:
            print(f"  trained version on the truth: {r.trained_ndcg} vs {best_name}")
        print(
            f"  champion {r.champion}: {r.champion_ndcg}; − best untrained ({best_name}) {r.vs_best}; "
            f"promotion: {'; '.join(r.promotions) or 'none'}; gap closed "
            f"{'n/a' if math.isnan(r.gap_closed) else f'{r.gap_closed:.0%}'}; − upper bound {r.vs_upper}",
            flush=True,
        )
    result.seconds = time.perf_counter() - begun
    print(f"{result.name}: {result.seconds:.0f} s (setup {result.setup_seconds:.0f} s)", flush=True)
    return result


def run_separately(name: str, args) -> CollectionResult:
    """One collection in a child process of this script, with its own fresh SQLite database."""
    with tempfile.TemporaryDirectory(prefix="bench-loop-result-") as directory:
        out = Path(directory) / "result.json"
        command = [
            sys.executable,
            str(Path(__file__).resolve()),
            "--collections",
            name,
            "--result-json",
            str(out),
        ]
        command += [
            "--outside",
            str(args.outside),
            "--budget",
            str(args.budget),
            "--rounds",
            str(args.rounds),
        ]
        command += [
            "--raters",
            str(args.raters),
            "--seed",
            str(args.seed),
            "--test-fraction",
            str(args.test_fraction),
        ]
        command += [
            "--max-questions",
            str(args.max_questions),
            "--embeddings-cache",
            str(args.embeddings_cache),
        ]
        if args.policy:
            command += ["--policy", args.policy]
        command += ["--pool", args.pool]
        if args.engine:
            command += ["--engine", args.engine]
        if args.engine_url:
            command += ["--engine-url", args.engine_url]
        sys.stdout.flush()
        subprocess.run(command, check=True)
        (data,) = json.loads(out.read_text())
    rounds = [RoundResult(**r) for r in data.pop("rounds")]
    return CollectionResult(**data, rounds=rounds)


def print_summary(results: list[CollectionResult]) -> None:
    print("\n## summary (truth: the test questions' complete judgments; NDCG@10, 95% bootstrap CI)\n")
    engine = any(c.first_stage != "BM25" for c in results)
    first, gap_from = ("engine alone", "best untrained") if engine else ("BM25", "fusion")
    print(
        f"| collection | answers | train / test questions (scored) | budget | {first} | untrained fusion "
        f"| upper bound (method) | upper − {gap_from} (95% CI), p | setup s | total s |"
    )
    print("|---|---:|---|---:|---|---|---|---|---:|---:|")
    for c in results:
        print(
            f"| {c.name} | {c.answers} | {c.train_questions} / {c.test_questions} ({c.scored_questions}) "
            f"| {c.budget} | {c.bm25} | {c.fusion} | {c.upper} ({c.upper_method}) | {c.upper_vs_fusion} "
            f"| {c.setup_seconds:.0f} "
            f"| {c.seconds:.0f} |"
        )
    print(
        "\n| collection | round | ratings so far (per question) | this round train / test | training "
        "| champion | champion NDCG@10 | champion − best untrained (95% CI), p | promotion on the truth "
        "| gap closed | champion − upper bound (95% CI), p | trained version on the truth: NDCG@10, − best "
        "untrained, p |"
    )
    print("|---|---:|---|---|---|---|---|---|---|---:|---|---|")
    for c in results:
        for r in c.rounds:
            gap = "n/a" if math.isnan(r.gap_closed) else f"{r.gap_closed:.0%}"
            print(
                f"| {c.name} | {r.number} | {r.cumulative} "
                f"({r.cumulative / max(1, c.train_questions + c.test_questions):.1f})"
                f"{', queue dry' if r.queue_dry else ''} | {r.by_split.get(Split.TRAIN, 0)} / "
                f"{r.by_split.get(Split.TEST, 0)} | {r.decision} | {r.champion} | {r.champion_ndcg} "
                f"| {r.vs_best} vs {c.best_untrained} | {'; '.join(r.promotions) or 'none'} | {gap} "
                f"| {r.vs_upper} | {r.trained_ndcg or '-'} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--collections",
        default="",
        help="comma-separated: cranfield-rr, cranfield-original and the folders of --outside (default all)",
    )
    parser.add_argument("--outside", type=Path, default=DEFAULT_OUTSIDE, help=f"default {DEFAULT_OUTSIDE}")
    parser.add_argument(
        "--budget", type=int, default=20, help="ratings per question (training and test), all rounds (20)"
    )
    parser.add_argument("--rounds", type=int, default=3, help="rate-then-train rounds (3)")
    parser.add_argument("--raters", type=int, default=2, help="simulated raters taking turns (2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the outside collections' split (0)")
    parser.add_argument(
        "--test-fraction", type=float, default=0.5, help="outside collections' share of test questions (0.5)"
    )
    parser.add_argument(
        "--policy", choices=PromotionPolicy.values, help="promotion policy (default: the ranker's default)"
    )
    parser.add_argument(
        "--max-questions", type=int, default=0, help="keep this many questions per collection"
    )
    parser.add_argument(
        "--pool",
        choices=("interleaved", "champion"),
        default="interleaved",
        help="the queue's pool: the app's (champion and latest other version in turns), or the champion's "
        "top k only, as before (to measure the choice)",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke run: {', '.join(QUICK_COLLECTIONS)} unless --collections, {QUICK_QUESTIONS} questions each",
    )
    parser.add_argument(
        "--embeddings-cache", type=Path, default=DEFAULT_CACHE, help=f"default {DEFAULT_CACHE}"
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="run every collection in this process (default with SQLite: one fresh process and database each)",
    )
    parser.add_argument(
        "--engine",
        choices=tuple(ENGINE_TITLES),
        help="the product's ranker is an engine ranker over a real node of this engine (make engines); "
        "default: the builtin ranker",
    )
    parser.add_argument(
        "--engine-url",
        help="with --engine: a node of it running at this URL (e.g. the tests' own) instead of one this bench "
        "starts; the answers go into an index (core) of the bench's own there, removed at the end",
    )
    parser.add_argument("--result-json", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.raters < 2:
        parser.error("--raters must be at least 2")
    if args.engine_url and not args.engine:
        parser.error("--engine-url needs --engine")
    available = list(CRANFIELD) + sorted(p.name for p in args.outside.iterdir() if (p / "qrels.tsv").exists())
    if args.quick:
        args.max_questions = args.max_questions or QUICK_QUESTIONS
        args.collections = args.collections or ",".join(QUICK_COLLECTIONS)
    names = [n.strip() for n in args.collections.split(",") if n.strip()] or available
    unknown = [n for n in names if n not in available]
    if unknown:
        parser.error(f"unknown collections {', '.join(unknown)}; available: {', '.join(available)}")
    print(
        f"bench_loop: code {code_version()}; database {connection.vendor}; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
        f"{args.raters} raters, {args.rounds} rounds, budget {args.budget} per question, seed {args.seed}, "
        f"test fraction {args.test_fraction} (outside); pool {args.pool}; "
        f"{f'ranker: {ENGINE_TITLES[args.engine]} engine, its top 50 reranked; ' if args.engine else ''}"
        f"CPUs {os.cpu_count()}; {load()}",
        flush=True,
    )
    Collection.objects.filter(slug__startswith=SLUG_PREFIX).delete()
    # bench_ranker's slugs, which the Cranfield editions use (left by a killed run).
    Collection.objects.filter(slug__in=["bench-cranfield", "bench-cranfield-225"]).delete()
    results = []
    begun = time.perf_counter()
    # The queue orders equally urgent questions, and shuffles answers, by a hash of the rater's and the
    # question's database ids: in one database a collection's figures would depend on the collections run
    # before it. With SQLite each collection runs in a fresh process and database, so its figures are the
    # same whichever collections run with it.
    separate = not args.in_process and len(names) > 1 and connection.vendor == "sqlite"
    try:
        for name in names:
            results.append(run_separately(name, args) if separate else run_collection(name, args))
    finally:
        shutil.rmtree(VAR_DIR, ignore_errors=True)
    if args.result_json:  # a child of run_separately: its parent prints the summary
        args.result_json.write_text(json.dumps([asdict(r) for r in results]))
        return
    print_summary(results)
    print(f"\ntotal {time.perf_counter() - begun:.0f} s; {load()}")


if __name__ == "__main__":
    main()
