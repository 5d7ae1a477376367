"""Does the learner's cross-validation reject models that would generalise? (issue 34 §2)

On the Cranfield demo, *Train new version* keeps the untrained fusion: the learned candidates lose the
cross-validation. This bench takes the demo's labels as ``bootstrap_demo`` loads them
(``demo_collection_load``, the app's slug ``cranfield``, so the app's split), and:

1. trains as *Train new version* does (``ranker_train``): each candidate's CV figure and the choice;
2. fits every candidate the learner tries (bm25, fusion, learned-fusion, lambdamart) on all the demo's
   training labels (``ranker_train`` with the choice forced, ``bench_definitions.forced``) and scores each
   on the **held-out Cranfield queries**: the 75 queries of the original 225 (``../shared/data/
   cranfield-original``) whose text is not one of the demo's 150, against their complete judgments
   (``cranqrel`` 1 → 3 stars, 2 → 2, 3 → 1, 4 and −1 → 0, unlisted 0, as ``bench_ranker.original_cranfield``),
   NDCG@10 on the queries with a relevant answer, difference to BM25 with its paired randomization p
   (``compare_runs``); also on the demo's own test questions against the same complete judgments;
3. repeats 1 and 2 under changes to the learner: the CV fold metric (judged-only over the top k, 2k (now),
   all candidates; unrated = 0 over the top k) and how the fit reads an unrated candidate (unknown, now;
   or 0 stars, as before issue 23's learner change b32537e), so that a rule that keeps a generalising
   model can be checked on the outside collections with ``--loop`` (bench_loop under the same rule).

    .venv/bin/python bench/bench_demo_generalise.py
    .venv/bin/python bench/bench_demo_generalise.py --loop zero-fit+zero@k -- --collections semeval16b
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import cast

import bench_loop as loop
import numpy as np
from bench_definitions import forced

from corpus.models import Question, Split
from evaluation.metrics.ranking import Discount, Gain, label_arrays, ndcg_at_k
from evaluation.metrics.stats import compare_runs
from evaluation.models import EvaluationRun
from evaluation.services import score_rankings, versions_compare
from rankers.backends import RankQuery, get_backend
from rankers.index import load_index
from rankers.models import RankerVersion
from rankers.semantic import embeddings_build_now
from rankers.services import ranker_create
from trainer.demo_vectors import demo_vectors_seed
from trainer.learner import candidates, cross_validation, training
from trainer.services import demo_collection_load, ranker_train, service_version_ensure

METHODS = ("bm25", "fusion", "learned-fusion", "lambdamart")
CV_RULES = ("judged@2k", "judged@k", "judged@all", "zero@k")
FIT_RULES = ("unknown", "zero")


def _zero_ndcg(rankings, examples, *, collection):
    """CV fold metric: unrated = 0 stars over the top k (plain NDCG@k, the evaluations' definition)."""
    k = collection.ndcg_k
    arrays = label_arrays([r[:k] for r in rankings], [e.labels for e in examples])
    return ndcg_at_k(
        arrays.retrieved,
        arrays.ideal,
        k,
        gain=cast(Gain, collection.gain_scheme),
        discount=cast(Discount, collection.discount),
    )


@contextmanager
def rule(cv: str, fit: str) -> Iterator[None]:
    """The learner with CV fold metric ``cv`` and fit reading of unrated candidates ``fit``."""
    saved = (candidates.CV_DEPTH_PAGES, cross_validation._ndcg, training.training_examples)
    pages = {"judged@2k": 2, "judged@k": 1, "judged@all": 10_000}
    if cv in pages:
        candidates.CV_DEPTH_PAGES = pages[cv]
    elif cv == "zero@k":
        cross_validation._ndcg = _zero_ndcg  # type: ignore[assignment]
    else:
        raise ValueError(cv)
    original = training.training_examples

    def read_unrated(**kwargs):
        examples = original(**kwargs)
        for e in examples:
            unrated = np.array([a not in e.labels for a in e.candidate_ids])
            e.targets = np.where(unrated, 0.0 if fit == "zero" else np.nan, e.targets)
            e.complete = False  # the CV reads unrated answers by ``cv`` alone
        return examples

    if fit not in FIT_RULES:
        raise ValueError(fit)
    training.training_examples = read_unrated  # type: ignore[assignment]
    try:
        yield
    finally:
        candidates.CV_DEPTH_PAGES, cross_validation._ndcg, training.training_examples = saved  # type: ignore[assignment]


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def original_queries(directory: Path) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """{query number: text} and {query number: {doc: stars}} of the original 225 (bench_ranker's mapping)."""
    queries = re.split(r"^\.I ", (directory / "cran.qry").read_text(), flags=re.M)[1:]
    texts = {
        str(n): " ".join(q.split("\n", 1)[1].replace(".W\n", "").split())
        for n, q in enumerate(queries, start=1)
    }
    truth: dict[str, dict[str, int]] = {}
    for line in (directory / "cranqrel").read_text().split("\n"):
        if line.strip():
            qid, doc, code = line.split()
            truth.setdefault(qid, {})[doc] = max(4 - int(code), 0) if int(code) > 0 else 0
    return texts, truth


class Held:
    """NDCG@10 of a version on some original queries, against their complete judgments."""

    def __init__(self, collection, queries: list[tuple[str, str]], truth) -> None:
        self.queries = [(n, t) for n, t in queries if any(s > 0 for s in truth.get(n, {}).values())]
        self.labels = [truth.get(n, {}) for n, _ in self.queries]
        self.run = EvaluationRun(
            ndcg_k=collection.ndcg_k,
            gain_scheme=collection.gain_scheme,
            discount=collection.discount,
            relevance_threshold=collection.relevance_threshold,
            accuracy_k=collection.accuracy_k,
        )

    def ndcg(self, version: RankerVersion) -> np.ndarray:
        backend = get_backend(version.ranker, version)
        rankings = [
            backend.rank(RankQuery(f"heldout-{n}", text), self.run.ndcg_k).ids for n, text in self.queries
        ]
        return np.asarray(
            score_rankings(run=self.run, rankings=rankings, labels=self.labels).ndcg, dtype=float
        )


def versus(a: np.ndarray, b: np.ndarray) -> str:
    c = compare_runs(a, b, n_resamples=5000, n_permutations=5000, seed=0)
    return f"{c.difference:+.4f} (p = {c.p_value:.3f})"


def measure(args) -> None:
    started = time.perf_counter()
    collection = demo_collection_load()
    assert collection is not None
    demo_vectors_seed()
    embeddings_build_now(collection=collection, index=load_index(collection=collection))
    node = None
    if args.engine:
        home = Path(tempfile.mkdtemp(dir=loop.VAR_DIR)) / args.engine
        node = loop.engine_start(args.engine, home, loop.engine_documents(collection, "cranfield-rr"))
        ranker = ranker_create(
            collection=collection, name=args.engine, kind="engine", config=node.config, is_default=True
        )
        service_version_ensure(ranker=ranker)  # v1: the engine as it is, the first champion
        ranker.refresh_from_db()
    else:
        ranker = ranker_create(collection=collection, name="Builtin", kind="builtin", is_default=True)
    try:
        _measure(args, collection, ranker, started)
    finally:
        if node is not None:
            node.stop()


def _measure(args, collection, ranker, started: float) -> None:
    first = "engine" if args.engine else "bm25"
    methods = (first, *METHODS[1:])
    texts, truth = original_queries(args.cranfield_original)
    demo_texts = {_norm(q.text) for q in Question.objects.filter(collection=collection)}
    held_out = [(n, t) for n, t in texts.items() if _norm(t) not in demo_texts]
    by_text = {_norm(t): n for n, t in texts.items()}
    demo_test = [
        (by_text[_norm(q.text)], q.text)
        for q in Question.objects.filter(collection=collection, split=Split.TEST).order_by("pk")
    ]
    held, own = Held(collection, held_out, truth), Held(collection, demo_test, truth)
    train_n = Question.objects.filter(collection=collection, split=Split.TRAIN).count()
    print(
        f"demo: {train_n} training / {len(demo_test)} test questions; held-out original queries "
        f"{len(held_out)} ({len(held.queries)} with a relevant answer); demo test queries scored on cranqrel "
        f"{len(own.queries)}; {loop.load()}",
        flush=True,
    )
    fitted: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
    for fit in FIT_RULES:
        for method in methods:
            if fit == "zero" and method in (first, "fusion"):
                fitted[(fit, method)] = fitted[("unknown", method)]
                continue
            with rule("judged@2k", fit), forced(method):
                version = ranker_train(ranker=ranker)
            fitted[(fit, method)] = (held.ndcg(version), own.ndcg(version))
    base_held, base_own = fitted[("unknown", first)]
    print(
        f"\n| fit reads an unrated candidate as | candidate | held-out 75 q: NDCG@10 | − {first} (p) | demo test q on "
        f"cranqrel | − {first} (p) |"
    )
    print("|---|---|---:|---|---:|---|")
    for (fit, method), (h, o) in fitted.items():
        print(
            f"| {fit} | {method} | {np.nanmean(h):.4f} | {versus(h, base_held)} | {np.nanmean(o):.4f} "
            f"| {versus(o, base_own)} |"
        )
    base_fusion = fitted[("unknown", "fusion")][0]
    champion = RankerVersion.objects.get(pk=ranker.champion_id)
    print(
        f"\n| fit | CV fold metric | {first} | fusion | learned-fusion | lambdamart | chosen | chosen on held-out − {first} (p) "
        f"| − fusion (p) | the gate on the demo's test labels: chosen − {champion.label} {champion.method} (judged-only) | s |"
    )
    print("|---|---|---:|---:|---:|---:|---|---|---|---|---:|")
    combos = [(fit, cv) for fit in FIT_RULES for cv in CV_RULES]
    if args.engine:  # the learner before and after: read as unknown, judged@2k; imported = 0 stars, zero@k
        combos = [("unknown", "judged@2k"), ("zero", "zero@k")]
    for fit, cv in combos:
        begun = time.perf_counter()
        with rule(cv, fit):
            version = ranker_train(ranker=ranker)
        table = {row["name"]: row for row in version.details["candidates"]}
        cells = " | ".join(
            f"{table[m]['cv_ndcg']:.4f} ({table[m]['rated_share']:.0%})" if m in table else "–"
            for m in methods
        )
        h, _ = fitted[(fit, version.method)]
        gate = versions_compare(challenger=version, champion=champion)
        print(
            f"| {fit} | {cv} | {cells} | **{version.method}** | {versus(h, base_held)} | {versus(h, base_fusion)} "
            f"| {gate.difference:+.4f} (p = {gate.p_value:.3f}, {gate.questions} q, {gate.verdict}) "
            f"| {time.perf_counter() - begun:.0f} |",
            flush=True,
        )
    product = ranker_train(ranker=ranker)  # the learner as it is, no rule forced
    h, _ = fitted.get(("zero", product.method), fitted[("unknown", product.method)])
    gate = versions_compare(challenger=product, champion=champion)
    print(
        f"\nThe learner as it is (code {loop.code_version()}): {product.method} chosen "
        f"(CV {product.cv_ndcg_model:.4f}); on held-out − {first} {versus(h, base_held)}, − fusion "
        f"{versus(h, base_fusion)}; gate {gate.difference:+.4f} (p = {gate.p_value:.3f}, {gate.verdict})"
    )
    print(
        f"\n(CV NDCG@10 with the share of held-out top-10 positions holding a rated answer.) total {time.perf_counter() - started:.0f} s; {loop.load()}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cranfield-original", type=Path, default=loop.DEFAULT_CRANFIELD_ORIGINAL)
    parser.add_argument(
        "--engine",
        choices=tuple(loop.ENGINE_TITLES),
        help="the demo's ranker an engine ranker over a real node (make engines), its top 50 reranked",
    )
    parser.add_argument(
        "--loop",
        metavar="FIT+CV",
        help="run bench_loop (the arguments after --) under this learner rule, e.g. zero+zero@k, unknown+judged@k",
    )
    argv = sys.argv[1:]
    rest: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, rest = argv[:at], argv[at + 1 :]
    args = parser.parse_args(argv)
    if args.loop:
        fit, cv = args.loop.split("+")
        sys.argv = [str(Path(loop.__file__)), "--in-process", *rest]
        print(f"bench_loop under the learner rule: fit reads unrated as {fit}, CV {cv}", flush=True)
        with ExitStack() as stack:
            stack.enter_context(rule(cv, fit))
            loop.main()
        return
    measure(args)


if __name__ == "__main__":
    main()
