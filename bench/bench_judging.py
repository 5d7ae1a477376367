"""Fewer ratings per decision (issue 13): simulated raters, four ways of choosing what they rate.

Per edition (the R&R demo, 150 questions, ``trainer.services.demo_collection_load``; and, with
--cranfield-original DIR, the original 225 queries), with the app's split rule:

* five ranker versions rank every question through the app's builtin backend (``BuiltinBackend`` over
  the collection's BM25 index): ``bm25``; ``rm3`` (RM3 expansion alone); ``mix`` (0.5 z(bm25) + 0.5
  z(rm3)); ``mix7`` (0.7 / 0.3); and ``overlap`` (the queue's term-overlap fallback ranking). The version
  pairs compared (champion → challenger) include pairs whose true difference is small.
* The **pool** of a pair is the union of both versions' top 10 on the test questions. The oracle is the
  collection's judgments (a pair not in them is 0 stars, as pooled test collections count it). "All
  labels" is the whole pool rated; test questions start with no label; the training questions' labels
  in both versions' top 10 are known (trainers rate training questions first), and only feed the
  relevance model's prior (:func:`evaluation.uncertainty.relevance_probabilities`, ``extra_counts``).
* Strategies (the order in which simulated raters rate the pool):
  - ``random``: the pool shuffled;
  - ``pooling``: depth-10 pooling of the two versions, *rank by rank* (every question's rank-1 answers
    of both versions, then rank 2, ...; shuffled within a rank): the classic pool, in its kindest order;
  - ``queue``: today's queue (``raters/next_task/``): the test question whose champion top 10 has the most
    unrated answers, all of them; when none is left (today's queue then moves on to training
    questions) the rest of the pool at random;
  - ``decide``: the new mode: the 5 unrated pairs with the largest ``value_p = c_p² Var(g_p)``
    (:func:`evaluation.uncertainty.pair_values`: the difference for (a) and (a'), the headline for
    (b); the queue's ``?mode=decide``), the
    relevance model refitted on the labels so far, then the next 5, ...
* What the product concludes after each 10 ratings, with the labels so far, two ways:
  - ``zero``: as scored today, unrated = not relevant;
  - ``predicted``: each question's NDCG@10 is its mean over 64 draws of the unrated pairs' stars from
    the relevance model (the dashboard's estimate).
  (a) **verdict, settled** (the certainty page's "Verdict once every answer is rated",
  :func:`evaluation.uncertainty.verdict_shares`): the compare page's verdict (paired randomization test,
  10,000 sign flips, p < 0.05: "real improvement" / "real drop", else "within noise") worked out for
  each of 64 draws of the unrated pairs' stars (the zero estimator: one draw, unrated = 0); the verdict
  when at least 95% of the draws agree, else "not settled yet", which equals no all-labels verdict.
  (a, unsettled): the earlier rule, the same test on the per-question means of the draws; it let a
  strategy that learns nothing "agree" from 0 ratings with an all-labels "within noise".
  (a, sign): which version is ahead on these questions (the sign of the mean difference), settled at
  95% of the draws: the criterion of minimal test collections (Carterette et al. 2006).
  (a') **difference**: the mean difference within ±0.01 of its all-labels value.
  (b) **headline**: the champion's mean NDCG@10 within ±0.02 of its all-labels value.
* **Ratings needed** = the first checkpoint from which the conclusion equals the all-labels one at every
  later checkpoint, so a lucky early agreement does not count. Medians over the seeds and version pairs, with the range over seeds.

Goal (issue 13): ``decide`` needs at most half the ratings of depth-10 pooling for both (a) and (b).

    DEBUG=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/queue_bench LOG_LEVEL=WARNING \\
        .venv/bin/python bench/bench_judging.py --cranfield-original /work/shared/data/cranfield-original

Collections are created under ``bench-judging-*`` slugs and deleted at the end (and at the start, when
a killed run left them).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("MODEL_DIR", tempfile.mkdtemp(prefix="bench-judging-"))

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from corpus.models import Collection, Split  # noqa: E402
from corpus.services import split_for  # noqa: E402
from evaluation.metrics.stats import paired_randomization_test  # noqa: E402
from evaluation.uncertainty import (  # noqa: E402
    JudgingArrays,
    bucket_counts,
    judging_arrays,
    ndcg_for_labels,
    pair_values,
    randomization_p_values,
    relevance_probabilities,
    sample_stars,
    verdict_shares,
)
from evaluation.uncertainty.improvement import sampled_means  # noqa: E402
from rankers.backends import RankQuery  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ranker import original_cranfield as cranfield_225  # noqa: E402

from rankers.builtin import BuiltinBackend  # noqa: E402
from rankers.index import build_index  # noqa: E402
from rankers.models import RankerVersion  # noqa: E402
from raters.next_task.term_overlap import term_overlap_ranking  # noqa: E402
from ratings.selectors import labels_by_question  # noqa: E402
from trainer.services import demo_collection_load  # noqa: E402

K = 10
CHECK_EVERY = 10
BATCH = 5
TOLERANCE = 0.02
ALPHA = 0.05
# The compare page's count: with 2,000 the p of a pair at 0.053 falls below 0.05 for some seeds.
PERMUTATIONS = 10_000
DRAWS = 64
DIFFERENCE_TOLERANCE = 0.01

VERSIONS = {
    "bm25": None,
    "rm3": {"signals": ["bm25", "rm3"], "weights": [0.0, 1.0]},
    "mix": {"signals": ["bm25", "rm3"], "weights": [0.5, 0.5]},
    "mix7": {"signals": ["bm25", "rm3"], "weights": [0.7, 0.3]},
}
PAIRS = [("bm25", "mix"), ("bm25", "mix7"), ("mix7", "mix"), ("mix", "rm3"), ("overlap", "bm25")]
STRATEGIES = ("random", "pooling", "queue", "decide")


# --- editions -------------------------------------------------------------------------------------


def demo_edition() -> Collection:
    collection = demo_collection_load(slug="bench-judging-demo")
    assert collection is not None
    for question in collection.questions.all():  # the split the app's "cranfield" demo has
        question.split = split_for(
            collection_slug="cranfield", external_id=question.external_id, test_fraction=0.3
        )
        question.save(update_fields=["split"])
    return collection


def original_cranfield(directory: Path) -> Collection:
    """All 225 original queries (bench_ranker's reader), under this bench's own slug (the split hashes it)."""
    return cranfield_225(directory, name="bench judging 225", slug="bench-judging-225")


@dataclass
class Edition:
    name: str
    test: list[int]  # question ids
    train: list[int]
    oracle: dict[int, dict[str, int]]  # question id -> answer external id -> stars
    rankings: dict[str, dict[int, list[str]]]  # version -> question id -> top K external ids


def rank_edition(collection: Collection, name: str) -> Edition:
    started = time.perf_counter()
    questions = list(collection.questions.order_by("id").values_list("id", "text", "split"))
    index = build_index(collection=collection)
    rankings: dict[str, dict[int, list[str]]] = {}
    for version_name, params in VERSIONS.items():
        version = RankerVersion(
            method="fusion" if params else "bm25", details={"params": params} if params else {}
        )
        backend = BuiltinBackend(collection=collection, version=version if params else None, index=index)
        rankings[version_name] = {
            q: backend.rank(RankQuery(external_id=str(q), text=text), K).ids[:K] for q, text, _ in questions
        }
    answers = [(a.external_id, f"{a.title} {a.body}") for a in collection.answers.order_by("id")]
    overlap = term_overlap_ranking(questions=[(q, text) for q, text, _ in questions], answers=answers, k=K)
    rankings["overlap"] = {q: [str(a) for a in ids] for q, ids in overlap.items()}
    oracle = labels_by_question(question_ids=[q for q, _, _ in questions])
    print(
        f"{name}: {len(questions)} questions ranked by {len(rankings)} versions in {time.perf_counter() - started:.1f} s"
    )
    return Edition(
        name=name,
        test=[q for q, _, split in questions if split == Split.TEST],
        train=[q for q, _, split in questions if split == Split.TRAIN],
        oracle={q: oracle.get(q, {}) for q, _, _ in questions},
        rankings=rankings,
    )


# --- one simulated world: a version pair's pool ------------------------------------------------------


@dataclass
class World:
    arrays: JudgingArrays  # labels all NaN (test questions start unrated)
    truth: np.ndarray  # (P,) oracle stars
    prior: np.ndarray  # bucket counts from the training questions
    pool_size: int


def _arrays(edition: Edition, questions: list[int], champion: str, challenger: str, labels=None):
    pair_question: list[int] = []
    truth: list[float] = []
    ids: dict[tuple[int, str], int] = {}
    runs = np.full((2, len(questions), K), -1, dtype=np.int64)
    for qi, q in enumerate(questions):
        for r, version in enumerate((champion, challenger)):
            for rank, answer in enumerate(edition.rankings[version][q][:K]):
                key = (q, answer)
                if key not in ids:
                    ids[key] = len(truth)
                    pair_question.append(qi)
                    truth.append(float(edition.oracle[q].get(answer, 0)))
                runs[r, qi, rank] = ids[key]
    truth_array = np.array(truth)
    return judging_arrays(
        pair_question=np.array(pair_question, dtype=np.int64),
        labels=truth_array if labels == "known" else np.full(truth_array.size, np.nan),
        run_pairs=runs,
        k=K,
    ), truth_array


def world(edition: Edition, champion: str, challenger: str) -> World:
    arrays, truth = _arrays(edition, edition.test, champion, challenger)
    train_arrays, _ = _arrays(edition, edition.train, champion, challenger, labels="known")
    return World(arrays=arrays, truth=truth, prior=bucket_counts(train_arrays), pool_size=truth.size)


def with_labels(arrays: JudgingArrays, labels: np.ndarray) -> JudgingArrays:
    return JudgingArrays(
        arrays.pair_question,
        labels,
        arrays.run_pairs,
        arrays.k,
        arrays.gain,
        arrays.discount,
        arrays.question_pairs,
    )


# --- strategies: the order in which the pool gets rated ------------------------------------------------


def _tiebreak(seed: int, n: int) -> np.ndarray:
    return np.random.default_rng(seed).random(n)


def order_random(w: World, seed: int, objective: str) -> np.ndarray:
    return np.random.default_rng(seed).permutation(w.pool_size)


def order_pooling(w: World, seed: int, objective: str) -> np.ndarray:
    best = w.arrays.best_rank()
    return np.lexsort((_tiebreak(seed, w.pool_size), best))


def order_queue(w: World, seed: int, objective: str) -> np.ndarray:
    """Today's queue: questions by unrated answers in the champion's top 10 (most first), all of them."""
    champion_top = w.arrays.run_pairs[0]
    counts = (champion_top >= 0).sum(axis=1)  # all unrated at the start; the count falls as they are rated
    ties = _tiebreak(seed, len(counts))
    order: list[int] = []
    for q in np.lexsort((ties, -counts)):
        order.extend(int(p) for p in champion_top[q] if p >= 0)
    rest = np.setdiff1d(np.arange(w.pool_size), order)
    return np.concatenate([np.array(order, dtype=np.int64), np.random.default_rng(seed).permutation(rest)])


def order_decide(w: World, seed: int, objective: str) -> np.ndarray:
    labels = np.full(w.pool_size, np.nan)
    ties = _tiebreak(seed, w.pool_size) * 1e-12  # only breaks exact ties
    best = w.arrays.best_rank().astype(np.float64)
    order: list[int] = []
    while len(order) < w.pool_size:
        current = with_labels(w.arrays, labels)
        probs = relevance_probabilities(current, extra_counts=w.prior)
        values = pair_values(current, probs, challenger=None if objective == "headline" else 1)
        # Unrated pairs by value, best rank breaking ties (a value of 0 says nothing).
        key = np.where(np.isnan(labels), values + ties - best * 1e-9, -np.inf)
        take = np.argsort(-key, kind="stable")[: min(BATCH, int(np.isnan(labels).sum()))]
        labels[take] = w.truth[take]
        order.extend(int(p) for p in take)
    return np.array(order, dtype=np.int64)


ORDERS = {"random": order_random, "pooling": order_pooling, "queue": order_queue, "decide": order_decide}


# --- what the product concludes from the labels so far -------------------------------------------------


def estimates(w: World, labels: np.ndarray, estimator: str, seed: int) -> tuple[np.ndarray, float]:
    """((2, Q) NDCG@10 of champion and challenger per test question, the champion's headline)."""
    current = with_labels(w.arrays, labels)
    if estimator == "zero":
        ndcg = ndcg_for_labels(current, np.nan_to_num(labels, nan=0.0))
        return ndcg, headline(ndcg)
    probs = relevance_probabilities(current, extra_counts=w.prior)
    draws = ndcg_for_labels(current, sample_stars(current, probs, DRAWS, np.random.default_rng(seed)))
    defined = ~np.isnan(draws)
    total = np.where(defined, draws, 0.0).sum(axis=0)
    count = defined.sum(axis=0)
    # A question counts when it is defined in at least half the draws (the all-labels verdict leaves
    # out questions without a known good answer); the headline is the mean of each draw's headline.
    per_question = np.where(count * 2 >= DRAWS, total / np.maximum(count, 1), np.nan)
    return per_question, float(sampled_means(draws)[:, 0].mean())


def completions(w: World, labels: np.ndarray, estimator: str, seed: int) -> np.ndarray:
    """(S, 2, Q) NDCG@10 per draw of the unrated labels (``zero``, or nothing unrated: one draw, unrated = 0)."""
    current = with_labels(w.arrays, labels)
    if estimator == "zero" or not current.unknown.any():
        return ndcg_for_labels(current, np.nan_to_num(labels, nan=0.0))[None]
    probs = relevance_probabilities(current, extra_counts=w.prior)
    return ndcg_for_labels(current, sample_stars(current, probs, DRAWS, np.random.default_rng(seed)))


def settled_verdict(w: World, labels: np.ndarray, estimator: str, seed: int) -> str:
    """The verdict when at least 95% of the completions of the unrated labels agree on it, else ""
    (:func:`evaluation.uncertainty.verdict_shares`, the certainty page's "Verdict")."""
    draws = completions(w, labels, estimator, seed)
    return verdict_shares(draws[:, 1] - draws[:, 0], n_permutations=PERMUTATIONS, seed=0).settled


def settled_sign(w: World, labels: np.ndarray, estimator: str, seed: int) -> str:
    """Which version is ahead on these questions, "+" or "−", when at least 95% of the completions of the
    unrated labels agree, else "" (minimal test collections' criterion: the sign of the difference)."""
    draws = completions(w, labels, estimator, seed)
    d = draws[:, 1] - draws[:, 0]
    means = np.where(~np.isnan(d), d, 0.0).sum(axis=1) / np.maximum((~np.isnan(d)).sum(axis=1), 1)
    ahead = float((means > 0).mean())
    return "+" if ahead >= 0.95 else "−" if ahead <= 0.05 else ""


def verdict(ndcg: np.ndarray) -> str:
    keep = ~np.isnan(ndcg).any(axis=0)
    d = ndcg[1, keep] - ndcg[0, keep]
    if d.size == 0:
        return "within noise"
    p = paired_randomization_test(ndcg[1, keep], ndcg[0, keep], n_permutations=PERMUTATIONS, seed=0)
    if p < ALPHA and d.mean() > 0:
        return "better"
    if p < ALPHA and d.mean() < 0:
        return "worse"
    return "within noise"


def difference(ndcg: np.ndarray) -> float:
    keep = ~np.isnan(ndcg).any(axis=0)
    return float((ndcg[1, keep] - ndcg[0, keep]).mean()) if keep.any() else 0.0


def headline(ndcg: np.ndarray) -> float:
    row = ndcg[0]
    return float(np.nanmean(row)) if (~np.isnan(row)).any() else 0.0


def ratings_needed(w: World, order: np.ndarray, objective: str, estimator: str, seed: int) -> int:
    truth_ndcg = ndcg_for_labels(w.arrays, w.truth)
    target_verdict, target_headline = verdict(truth_ndcg), headline(truth_ndcg)
    target_difference = difference(truth_ndcg)
    target_settled = settled_verdict(w, w.truth, estimator, seed) if objective == "settled" else ""
    target_sign = settled_sign(w, w.truth, estimator, seed)
    checkpoints = list(range(0, w.pool_size, CHECK_EVERY)) + [w.pool_size]
    labels = np.full(w.pool_size, np.nan)
    settled_since = None
    done = 0
    for n in checkpoints:
        labels[order[done:n]] = w.truth[order[done:n]]
        done = n
        if objective == "settled":
            ok = settled_verdict(w, labels, estimator, seed) == target_settled
        elif objective == "sign":
            ok = settled_sign(w, labels, estimator, seed) == target_sign
        else:
            ndcg, estimate = estimates(w, labels, estimator, seed)
        if objective in ("settled", "sign"):
            pass
        elif objective == "verdict":
            ok = verdict(ndcg) == target_verdict
        elif objective == "difference":
            ok = abs(difference(ndcg) - target_difference) <= DIFFERENCE_TOLERANCE
        else:
            ok = abs(estimate - target_headline) <= TOLERANCE
        if ok and settled_since is None:
            settled_since = n
        elif not ok:
            settled_since = None
    assert settled_since is not None  # with every label the conclusion is the all-labels one
    return settled_since


# --- the run ---------------------------------------------------------------------------------------------


def spread(values: list[int]) -> str:
    return f"{int(np.median(values)):>4} ({min(values)}–{max(values)})"


OBJECTIVES = ("settled", "verdict", "sign", "difference", "headline")
LETTERS = {"settled": "a", "verdict": "a, unsettled", "sign": "a, sign", "difference": "a'", "headline": "b"}


def run_edition(edition: Edition, seeds: int, objectives: tuple[str, ...] = OBJECTIVES) -> dict:
    results: dict = {}
    print(f"\n## {edition.name}: {len(edition.test)} test questions\n")
    print("| champion → challenger | pool | all-labels Δ NDCG@10 | verdict | headline |")
    print("|---|---:|---:|---|---:|")
    # The verdict and p are settled_verdict's test with every label (10,000 sign flips, seed 0), which
    # the (a) rows aim for; "unsettled" is the verdict the (a, unsettled) rows aim for.
    worlds = {}
    for champion, challenger in PAIRS:
        w = world(edition, champion, challenger)
        worlds[(champion, challenger)] = w
        truth = ndcg_for_labels(w.arrays, w.truth)
        d = truth[1] - truth[0]
        p = randomization_p_values(d[None], n_permutations=PERMUTATIONS, rng=np.random.default_rng(0))[0]
        print(
            f"| {champion} → {challenger} | {w.pool_size} | {np.nanmean(d):+.3f} | "
            f"{settled_verdict(w, w.truth, 'zero', 0)} (p = {p:.3f}; unsettled: {verdict(truth)}) | "
            f"{headline(truth):.3f} |"
        )
    for objective in objectives:
        for estimator in ("zero", "predicted"):
            letter = LETTERS[objective]
            print(f"\n### ({letter}) {objective}, estimator {estimator}: ratings needed")
            print("median over seeds (range)\n")
            print("| champion → challenger | " + " | ".join(STRATEGIES) + " | decide / pooling |")
            print("|---|" + "---:|" * (len(STRATEGIES) + 1))
            for pair, w in worlds.items():
                row = {}
                for strategy in STRATEGIES:
                    row[strategy] = [
                        ratings_needed(w, ORDERS[strategy](w, seed, objective), objective, estimator, seed)
                        for seed in range(seeds)
                    ]
                results[(objective, estimator, pair)] = row
                ratio = np.median(row["decide"]) / max(np.median(row["pooling"]), 1)
                print(
                    f"| {pair[0]} → {pair[1]} | "
                    + " | ".join(spread(row[s]) for s in STRATEGIES)
                    + f" | {ratio:.2f} |"
                )
            totals = {
                s: [sum(results[(objective, estimator, p)][s][i] for p in worlds) for i in range(seeds)]
                for s in STRATEGIES
            }
            ratio = np.median(totals["decide"]) / max(np.median(totals["pooling"]), 1)
            print(
                "| **all pairs (sum)** | "
                + " | ".join(spread(totals[s]) for s in STRATEGIES)
                + f" | **{ratio:.2f}** |"
            )
            results[(objective, estimator, "total")] = totals
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--cranfield-original", type=Path, help="directory with cran.all.1400, cran.qry, cranqrel"
    )
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument(
        "--objectives", default=",".join(OBJECTIVES), help=f"comma-separated, of {', '.join(OBJECTIVES)}"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    call_command("migrate", verbosity=0)
    # A run that was killed leaves its collections behind; these slugs belong to this bench.
    Collection.objects.filter(slug__startswith="bench-judging-").delete()
    collections = []
    try:
        editions = []
        collections.append(demo_edition())
        editions.append(rank_edition(collections[-1], "Cranfield demo (150 questions)"))
        if args.cranfield_original:
            collections.append(original_cranfield(args.cranfield_original))
            editions.append(rank_edition(collections[-1], "Cranfield original (225 questions)"))
        for edition in editions:
            run_edition(edition, args.seeds, tuple(args.objectives.split(",")))
    finally:
        for collection in collections:
            collection.delete()
    digest = hashlib.sha256(str(sorted(VERSIONS)).encode()).hexdigest()[:8]
    print(
        f"\n{args.seeds} seeds, checkpoints every {CHECK_EVERY} ratings, decide batches of {BATCH}; "
        f"versions {digest}; {time.perf_counter() - started:.0f} s, load {os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main()
