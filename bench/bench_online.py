"""Online tests proven by simulation (issue 36 §4): simulated users click the app's interleaved lists of two
real versions of a collection; the app's credit and verdict decide (not a test, see bench/README.md).

    .venv/bin/python bench/bench_online.py                                   # all five outside collections
    .venv/bin/python bench/bench_online.py --collections adi --aa-tests 200  # a quick look

**Versions** (real, made by the app's own services on each outside collection, as ``bench_loop`` makes
its references: ``outside_collection`` imports it, split by a hash, half the questions to test): on a
builtin ranker, ``bm25``, the untrained ``fusion`` z(bm25) + z(cosine), two versions trained by
``trainer.services.ranker_train`` on the complete judgments (unlisted answers among BM25's candidates 0
stars, as bench_loop's upper bound) of 25% and 100% of the training questions (``train25``, ``train100``;
the labels deleted after each training), and, since those trainings mostly keep BM25 or the fusion
(their cross-validation finds no learned model better by the margin), constructed versions to have pairs
at every ΔNDCG: ``learned-fusion`` versions (the method a training makes, served by the app's own code)
Σ w_f z(f) over bm25 and cosine with weights (1 − w, w), w = 0.1 … 0.7 (``cos10`` … ``cos70``). A version ranking every question as an earlier one does (a
training whose cross-validation kept BM25 or the fusion) is that version, not a second one. Each version ranks every test question that has a relevant answer
(top 10, ``get_backend(...).rank``); its NDCG@10 on the complete judgments is the app's own scoring
(``bench_loop.TruthScorer``). Every pair of versions of a collection is a pair of the agreement table;
the pairs whose ΔNDCG@10 is nearest 0.02 and 0.05 (over all collections) are the sensitivity pairs.

**Users**: a query is a test question drawn uniformly; its answers' true grades are the collection's
judgments mapped to the click models' 0/1/2 by the stars the app gives them (``../shared/data/outside/
README.md``: binary 1 → 3 stars, graded 0/1/2 → 0/2/3 stars; then stars 0 → grade 0, 1–2 → 1, 3 → 2, so a
graded collection keeps its own scale and a binary one's relevant answer is grade 2). The cascade model
(Craswell et al. 2008; the parameters of Hofmann, Whiteson & de Rijke 2011/2013): the user reads the
list from the top; at rank r she clicks with P(click | g_r) and, after a click, stops with P(stop | g_r)::

                    P(click | 0, 1, 2)     P(stop | 0, 1, 2)
    perfect          0.0  0.5  1.0          0.0  0.0  0.0
    navigational     0.05 0.5  0.95         0.2  0.5  0.9
    informational    0.4  0.7  0.9          0.1  0.3  0.5

Vectorised: for n impressions, uniform matrices U, V (n × 10); clicked_r = U_r < P(click | g_r);
examined_r = no stop before r = Π_{s<r} (1 − clicked_s · [V_s < P(stop | g_s)]); click_r = clicked_r ·
examined_r.

**Interleaving**: ``rankers.interleaving.team_draft_interleave`` (the function ``ranker_server`` calls),
salt "bench". A served query's list depends on its query id only through the first 5 coins of
``coin_flips`` (team draft of 10 hits flips one coin per 2 picks), so one query id per coin pattern (32,
found by trying "sim-0", "sim-1", …) gives every list a fresh query id can give, and a served query draws
one of the 32 uniformly: exactly the distribution of fresh query ids (an earlier draft drew from 64 random
query ids per question, whose unequal patterns biased the A/A: 12–23% false positives on adi); clicks → ``evaluation.online.credit_clicks`` (per query: the
team with more clicked hits wins) → ``sequential_p_values`` (the mixture SPRT's always-valid p-value after
every query: what the version page's selector computes, so the page peeking after every query is
covered) and ``online_verdict``.

**A/B on CTR**: the same users (the same U, V and questions) see the champion's list on even queries and
the challenger's on odd ones; CTR = clicks per query. The version with the higher CTR is picked. Also
shown: the share of queries with a click (abandonment's complement), picked the same way.

Reported (each with its number of simulated experiments):

* A/A: the collection's best version against itself, ``--aa-tests`` experiments × ``--aa-queries``
  served queries, significant when the always-valid p-value ever reaches α = 0.05;
* sensitivity: served queries at which ≥ 95% of ``--tests`` experiments pick the better version (by the
  sign of wins − losses, and of CTR_B − CTR_A; ties are misses), and at which ≥ 95% reach the app's
  verdict "challenger better"; for A/B also ≥ 95% significant by a two-sided z-test of the CTR
  difference at that fixed horizon (its most favourable use). Simulated on a grid up to
  ``--max-queries``; an A/B figure beyond it is the normal approximation n = 2 · 1.645² (σ_A² + σ_B²) /
  (μ_B − μ_A)² (sign) or 2 (1.96 + 1.645)² (σ_A² + σ_B²) / (μ_B − μ_A)² (z-test) from the same users'
  per-query clicks (mean μ, variance σ² from 200,000 simulated queries per version), marked ≈;
* agreement: for every pair of versions whose offline difference is significant (``compare_runs``,
  paired randomization p < 0.05 on the test questions' NDCG@10), the online direction after
  ``--agree-queries`` served queries (sign of wins − losses), over ``--agree-tests`` experiments each;
* implicit labels: per collection and click model, ``--label-queries`` test questions each shown I times
  (I = 10, 100, 1000) as interleavings of bm25 and the collection's best version (so answers move
  between ranks); COEC
  (``evaluation.online.coec``, maxRank 10, ordinals from 1), the PBM's attractiveness
  (``fit_position_based_model``), and the cascade model's (``fit_dbn``: one session per impression; its
  SDBN start, its EM fit a and a · s) against the true grade, per question over its shown answers
  (questions whose shown answers have 2+ grades), averaged: Kendall τ-b of the figure, rounded to 3
  decimals first (as SRW prints COEC, so that EM's tiny differences between never-clicked answers are
  ties, not an order), Somers' D of the figure given the grade (the grades' ties left out), and τ-b of
  the 0–3 stars the app gives (``to_stars``). "untied truth" (the grades, every tie broken) shows τ-b's
  ceiling for a figure that ties nothing. ``--parts labels`` runs only this part.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import pickle
import resource
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from bench_loop import (  # noqa: E402 - sets up Django in a private directory, as bench_loop runs
    DEFAULT_OUTSIDE,
    VAR_DIR,
    TruthScorer,
    load,
    outside_collection,
)
from bench_ranker import DEFAULT_CACHE, FUSION_PARAMS
from django.test.utils import override_settings

from corpus.formats.records import JudgmentRecord
from corpus.models import Collection, Question, Split
from evaluation.metrics.stats import compare_runs
from evaluation.online import (
    ATTRACTIVENESS_THRESHOLDS,
    COEC_THRESHOLDS,
    coec,
    coin_flips,
    credit_clicks,
    fit_dbn,
    fit_position_based_model,
    sequential_p_values,
    team_draft_interleave,
    to_stars,
)
from rankers.backends import RankQuery, get_backend
from rankers.builtin import clear_ranker_caches
from rankers.index import load_index
from rankers.models import RankerVersion
from rankers.semantic import embeddings_build_now
from rankers.services import ranker_create
from ratings.models import Label, Rating
from trainer.services import collection_import, ranker_train

ALPHA = 0.05
DEPTH = 10
SHARES = (25, 100)  # % of the training questions whose judgments a trained version learns from
# Learned-fusion versions on the line from BM25 to the fusion and beyond: Σ w_f z(f) over (bm25, cosine),
# weights (1 − w, w); w = 0.5 is the untrained fusion.
COSINE_WEIGHTS = (0.1, 0.2, 0.3, 0.4, 0.6, 0.7)
PARTS = ("aa", "sensitivity", "agreement", "labels")
ROUNDS = (DEPTH + 1) // 2  # coins team draft uses for a list of DEPTH
SALT = "bench"
BLOCK = 100_000  # impressions simulated at once
CLICK_MODELS = {
    "perfect": ((0.0, 0.5, 1.0), (0.0, 0.0, 0.0)),
    "navigational": ((0.05, 0.5, 0.95), (0.2, 0.5, 0.9)),
    "informational": ((0.4, 0.7, 0.9), (0.1, 0.3, 0.5)),
}
LABEL_ESTIMATES = ("COEC", "PBM", "SDBN", "DBN", "DBN a·s", "untied truth")
STARS_TO_GRADE = np.array([0, 1, 1, 2])  # 0 stars → 0, 1–2 → 1, 3 → 2
Z95, Z_SIDED = 1.6448536269514722, 1.959963984540054


# --- versions --------------------------------------------------------------------------------------


@dataclass
class Version:
    name: str
    ndcg: np.ndarray  # per scored test question
    ranking: list[list[str]]  # top 10 ids per scored test question


@dataclass
class CollectionVersions:
    name: str
    questions: list[str]
    grades: list[dict[str, int]]  # per scored test question: answer id → grade 0/1/2 (unlisted 0)
    versions: dict[str, Version] = field(default_factory=dict)


def build_versions(name: str, args) -> CollectionVersions:
    collection, truth = outside_collection(args.outside / name, seed=args.seed, test_fraction=0.5)
    try:
        with override_settings(EMBEDDINGS_DIR=args.embeddings_cache / f"loop-{name}"):
            return _build(collection, truth, name)
    finally:
        collection.delete()
        clear_ranker_caches()


def _build(collection: Collection, truth, name: str) -> CollectionVersions:
    started = time.perf_counter()
    embeddings_build_now(collection=collection, index=load_index(collection=collection))
    ranker = ranker_create(collection=collection, name="bench online", kind="builtin")
    made = {
        "bm25": RankerVersion.objects.create(ranker=ranker, label="bench-bm25", method="bm25"),
        "fusion": RankerVersion.objects.create(
            ranker=ranker,
            label="bench-fusion",
            method="fusion",
            uses_model=True,
            details={"params": FUSION_PARAMS},
        ),
    }
    for w in COSINE_WEIGHTS:
        made[f"cos{round(w * 100)}"] = RankerVersion.objects.create(
            ranker=ranker,
            label=f"bench-cos{round(w * 100)}",
            method="learned-fusion",
            uses_model=True,
            details={"params": {"signals": ["bm25", "cosine"], "weights": [1.0 - w, w]}},
        )
    train_qs = sorted(
        Question.objects.filter(collection=collection, split=Split.TRAIN), key=lambda q: q.external_id
    )
    candidates = get_backend(ranker, made["bm25"])
    depth = ranker.config.get("candidates", 100)
    order = np.random.default_rng(0).permutation(len(train_qs))
    for share in SHARES:
        chosen = [train_qs[i] for i in order[: max(1, round(len(train_qs) * share / 100))]]
        complete = []
        for q in chosen:
            pairs = dict(truth.get(q.external_id, {}))
            for a in candidates.rank(RankQuery(q.external_id, q.text), depth).ids:
                pairs.setdefault(a, 0)
            complete += [JudgmentRecord(q.external_id, a, stars) for a, stars in pairs.items()]
        collection_import(collection=collection, judgments=complete)
        made[f"train{share}"] = ranker_train(ranker=ranker)
        Rating.objects.filter(question__collection=collection).delete()
        Label.objects.filter(question__collection=collection).delete()
    scorer = TruthScorer(collection, truth)
    out = CollectionVersions(
        name=name,
        questions=[q.external_id for q in scorer.questions],
        grades=[{a: int(STARS_TO_GRADE[s]) for a, s in labels.items()} for labels in scorer.labels],
    )
    same = []
    for label, version in made.items():
        backend = get_backend(version.ranker, version)
        ranking = [backend.rank(RankQuery(q.external_id, q.text), DEPTH).ids for q in scorer.questions]
        twin = next((k for k, v in out.versions.items() if v.ranking == ranking), None)
        if twin is not None:  # a training that kept an earlier version's ranking: not a second version
            same.append(f"{label} = {twin}")
            continue
        out.versions[label] = Version(label, scorer.ndcg(version), ranking)
    print(
        f"{name}: {len(out.questions)} scored test questions; NDCG@10 "
        + ", ".join(f"{k} {np.nanmean(v.ndcg):.4f} ({made[k].method})" for k, v in out.versions.items())
        + (f"; same rankings: {', '.join(same)}" if same else "")
        + f"; {time.perf_counter() - started:.0f} s",
        flush=True,
    )
    return out


# --- simulated users -------------------------------------------------------------------------------


@dataclass
class Served:
    """Per question and query-id variant: the grades (−1: no hit) and teams of the served list."""

    grades: np.ndarray  # (questions, variants, DEPTH) int8
    teams: np.ndarray  # (questions, variants, DEPTH) int8
    ids: list[list[tuple[str, ...]]]


def pattern_query_ids(salt: str = SALT) -> list[str]:
    """One query id per pattern of the first ROUNDS coins (``coin_flips``, the app's hash): a list of 10
    from team draft uses at most 5 coins, so these 32 query ids give the 32 interleavings a fresh query id
    gives, each with probability 1/32 exactly."""
    found: dict[tuple[int, ...], str] = {}
    k = 0
    while len(found) < 2**ROUNDS:
        query_id = f"sim-{k}"
        found.setdefault(tuple(coin_flips(query_id, ROUNDS, salt=salt)), query_id)
        k += 1
    return [found[p] for p in sorted(found)]


def interleavings(c: CollectionVersions, a: str, b: str) -> Served:
    query_ids = pattern_query_ids()
    variants = len(query_ids)
    n = len(c.questions)
    grades = np.full((n, variants, DEPTH), -1, np.int8)
    teams = np.zeros((n, variants, DEPTH), np.int8)
    ids: list[list[tuple[str, ...]]] = []
    for q in range(n):
        row = []
        for v in range(variants):
            served = team_draft_interleave(
                c.versions[a].ranking[q],
                c.versions[b].ranking[q],
                query_id=query_ids[v],
                length=DEPTH,
                salt=SALT,
            )
            k = len(served.hits)
            grades[q, v, :k] = [c.grades[q].get(h, 0) for h in served.hits]
            teams[q, v, :k] = served.teams
            row.append(served.hits)
        ids.append(row)
    return Served(grades, teams, ids)


def list_grades(c: CollectionVersions, version: str) -> np.ndarray:
    out = np.full((len(c.questions), DEPTH), -1, np.int8)
    for q, ranking in enumerate(c.versions[version].ranking):
        out[q, : len(ranking)] = [c.grades[q].get(h, 0) for h in ranking[:DEPTH]]
    return out


def cascade_clicks(grades: np.ndarray, u: np.ndarray, v: np.ndarray, model: str) -> np.ndarray:
    """(n, DEPTH) bool clicks of the cascade model; grade −1 (no hit) is never clicked."""
    p_click, p_stop = (np.array((0.0, *p)) for p in CLICK_MODELS[model])
    g = grades.astype(np.int64) + 1
    clicked = u < p_click[g]
    stops = clicked & (v < p_stop[g])
    examined = np.ones_like(clicked)
    examined[:, 1:] = np.cumsum(stops, axis=1)[:, :-1] == 0
    return clicked & examined


def outcomes(served: Served, model: str, rng: np.random.Generator, tests: int, queries: int) -> np.ndarray:
    """(tests, queries) per-query outcome (+1 challenger wins, −1 loses, 0 tie or no click) by the app's
    credit, in blocks."""
    out = np.empty((tests, queries), np.int8)
    flat = out.reshape(-1)
    total = tests * queries
    nq = served.grades.shape[0]
    for start in range(0, total, BLOCK):
        n = min(BLOCK, total - start)
        q = rng.integers(0, nq, n)
        var = rng.integers(0, served.grades.shape[1], n)
        g, t = served.grades[q, var], served.teams[q, var]
        clicks = cascade_clicks(g, rng.random((n, DEPTH)), rng.random((n, DEPTH)), model)
        row, pos = np.nonzero(clicks)
        credit = credit_clicks(row, pos, t[row, pos], n_queries=n)
        flat[start : start + n] = credit.outcome
    return out


# --- reports ---------------------------------------------------------------------------------------


def aa(c: CollectionVersions, version: str, model: str, args, seed: int) -> tuple[float, float]:
    served = interleavings(c, version, version)
    rng = np.random.default_rng(seed)
    significant = 0
    decisive = 0.0
    for start in range(0, args.aa_tests, 100):
        block = min(100, args.aa_tests - start)
        x = outcomes(served, model, rng, block, args.aa_queries)
        significant += int((sequential_p_values(x)[:, -1] <= ALPHA).sum())
        decisive += float((x != 0).mean()) * block
    return significant / args.aa_tests, decisive / args.aa_tests


def grid(limit: int) -> np.ndarray:
    return np.unique(np.round(np.geomspace(20, limit, 40)).astype(np.int64))


def first_at(share: np.ndarray, looks: np.ndarray) -> str:
    hit = np.flatnonzero(share >= 0.95)
    return f"{looks[hit[0]]:,}" if hit.size else f"> {looks[-1]:,}"


def ab_moments(
    c: CollectionVersions, version: str, model: str, rng: np.random.Generator
) -> tuple[float, float]:
    g = list_grades(c, version)
    n = 200_000
    q = rng.integers(0, g.shape[0], n)
    clicks = cascade_clicks(g[q], rng.random((n, DEPTH)), rng.random((n, DEPTH)), model).sum(axis=1)
    return float(clicks.mean()), float(clicks.var())


def sensitivity(c: CollectionVersions, worse: str, better: str, model: str, args, seed: int) -> dict:
    """Interleaving and A/B over the same users: the same questions and uniforms for both."""
    served = interleavings(c, worse, better)
    ga, gb = list_grades(c, worse), list_grades(c, better)
    rng = np.random.default_rng(seed)
    looks = grid(args.max_queries)
    sign_i = np.zeros(looks.size)
    verdict_i = np.zeros(looks.size)
    sign_ab = np.zeros(looks.size)
    z_ab = np.zeros(looks.size)
    sign_any = np.zeros(looks.size)
    nq = len(c.questions)
    for _ in range(args.tests):
        n = args.max_queries
        q = rng.integers(0, nq, n)
        var = rng.integers(0, served.grades.shape[1], n)
        u, v = rng.random((n, DEPTH)), rng.random((n, DEPTH))
        g, t = served.grades[q, var], served.teams[q, var]
        clicks = cascade_clicks(g, u, v, model)
        row, pos = np.nonzero(clicks)
        x = credit_clicks(row, pos, t[row, pos], n_queries=n).outcome
        lead = np.cumsum(x, dtype=np.int64)[looks - 1]
        p = sequential_p_values(x)[looks - 1]
        sign_i += lead > 0
        verdict_i += (p <= ALPHA) & (lead > 0)
        # A/B: even queries see the worse version's list, odd ones the better's; same q, u, v.
        arm_b = (np.arange(n) % 2).astype(bool)
        shown = np.where(arm_b[:, None], gb[q], ga[q])
        per_query = cascade_clicks(shown, u, v, model).sum(axis=1).astype(np.float64)
        ca = np.cumsum(np.where(arm_b, 0.0, per_query))[looks - 1]
        cb = np.cumsum(np.where(arm_b, per_query, 0.0))[looks - 1]
        sa = np.cumsum(np.where(arm_b, 0.0, per_query**2))[looks - 1]
        sb = np.cumsum(np.where(arm_b, per_query**2, 0.0))[looks - 1]
        na, nb = np.ceil(looks / 2), np.floor(looks / 2)
        ma, mb = ca / na, cb / nb
        va = np.maximum(sa / na - ma**2, 0) / na
        vb = np.maximum(sb / nb - mb**2, 0) / nb
        sign_ab += mb > ma
        anyclick = per_query > 0
        any_a = np.cumsum(anyclick & ~arm_b)[looks - 1] / na
        any_b = np.cumsum(anyclick & arm_b)[looks - 1] / nb
        sign_any += any_b > any_a
        with np.errstate(divide="ignore", invalid="ignore"):
            z = (mb - ma) / np.sqrt(va + vb)
        z_ab += np.nan_to_num(z) > Z_SIDED
    k = args.tests
    mu_a, var_a = ab_moments(c, worse, model, rng)
    mu_b, var_b = ab_moments(c, better, model, rng)
    gap = mu_b - mu_a

    def normal(z: float) -> str:
        if gap <= 0:
            return "never (CTR not higher)"
        return f"≈ {2 * z**2 * (var_a + var_b) / gap**2:,.0f}"

    ab_sign, ab_z = first_at(sign_ab / k, looks), first_at(z_ab / k, looks)
    return {
        "interleaving_sign": first_at(sign_i / k, looks),
        "interleaving_verdict": first_at(verdict_i / k, looks),
        "ab_sign": ab_sign if not ab_sign.startswith(">") else normal(Z95),
        "ab_any": first_at(sign_any / k, looks),
        "ab_z": ab_z if not ab_z.startswith(">") else normal(Z_SIDED + Z95),
        "ctr": f"{mu_a:.3f} / {mu_b:.3f}",
    }


def agreement(
    collections: list[CollectionVersions], model: str, args, seed: int
) -> tuple[int, int, int, list]:
    """Offline-significant pairs; pairs whose online direction (majority over the experiments) agrees;
    experiments agreeing; the disagreeing pairs."""
    rng = np.random.default_rng(seed)
    pairs = agreeing = experiments_agreeing = 0
    wrong = []
    for c in collections:
        for a, b in itertools.combinations(c.versions, 2):
            cmp = compare_runs(c.versions[a].ndcg, c.versions[b].ndcg, n_resamples=1000, n_permutations=5000)
            if not cmp.p_value < ALPHA:
                continue
            offline = 1 if np.nanmean(c.versions[b].ndcg) > np.nanmean(c.versions[a].ndcg) else -1
            x = outcomes(interleavings(c, a, b), model, rng, args.agree_tests, args.agree_queries)
            direction = np.sign(x.sum(axis=1, dtype=np.int64))
            pairs += 1
            experiments_agreeing += int((direction == offline).sum())
            if np.sign(direction.sum()) == offline:
                agreeing += 1
            else:
                wrong.append(
                    f"{c.name} {a}/{b} (ΔNDCG {np.nanmean(c.versions[b].ndcg - c.versions[a].ndcg):+.3f})"
                )
    return pairs, agreeing, experiments_agreeing, wrong


def kendall_tau_b(x: np.ndarray, y: np.ndarray) -> float:
    """τ_b = (C − D) / √((n₀ − n₁)(n₀ − n₂)) over all pairs i < j (n₁, n₂: pairs tied in x, in y)."""
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu(np.ones(dx.shape, bool), 1)
    concordance = float((dx * dy)[upper].sum())
    untied_x, untied_y = float((dx[upper] != 0).sum()), float((dy[upper] != 0).sum())
    return concordance / math.sqrt(untied_x * untied_y) if untied_x and untied_y else math.nan


def somers_d(x: np.ndarray, y: np.ndarray) -> float:
    """Somers' D of x given y: (C − D) / (n₀ − n₂), over the pairs the grades y tell apart; a pair x ties
    counts 0. For two grades it is 2 · AUC − 1."""
    dx = np.sign(x[:, None] - x[None, :])
    dy = np.sign(y[:, None] - y[None, :])
    upper = np.triu(np.ones(dx.shape, bool), 1)
    untied_y = float((dy[upper] != 0).sum())
    return float((dx * dy)[upper].sum()) / untied_y if untied_y else math.nan


def implicit_labels(
    c: CollectionVersions, model: str, impressions: int, args, seed: int
) -> tuple[dict[str, tuple[float, ...]], int]:
    rng = np.random.default_rng(seed)
    best = max(c.versions, key=lambda k: np.nanmean(c.versions[k].ndcg))
    served = interleavings(c, "bm25", best)
    nq = min(args.label_queries, len(c.questions))
    q = np.repeat(np.arange(nq), impressions)
    var = rng.integers(0, served.grades.shape[1], q.size)
    g = served.grades[q, var]
    clicks = cascade_clicks(g, rng.random(g.shape), rng.random(g.shape), model)
    # The answers: one code per (question, answer id) over the lists shown.
    names = {}
    codes = np.full(g.shape, -1, np.int64)
    for i, (qq, vv) in enumerate(zip(q, var, strict=True)):
        for r, hit in enumerate(served.ids[qq][vv]):
            codes[i, r] = names.setdefault((qq, hit), len(names))
    shown = codes >= 0
    row, rank = np.nonzero(shown)
    pair = codes[row, rank]
    clicked = clicks[row, rank]
    # COEC from UBI-shaped events: an impression per shown hit, a click per click.
    c_rows = np.concatenate([np.arange(row.size), np.flatnonzero(clicked)])
    action = np.where(np.arange(c_rows.size) < row.size, "impression", "click")
    result = coec(
        action=action,
        ordinal=rank[c_rows] + 1,
        user_query=q[row[c_rows]].astype(str).astype(object),
        object_id=pair[c_rows].astype(str).astype(object),
        max_rank=DEPTH,
        first_ordinal=1,
    )
    coec_value = np.zeros(len(names))
    coec_value[result.object_id.astype(np.int64)] = result.value
    # PBM from rows of (rank, pair, clicks, impressions), one per event: EM aggregates them.
    pbm = fit_position_based_model(
        rank + 1, pair, clicked.astype(np.int64), np.ones(row.size), n_pairs=len(names)
    )
    # The DBN from the sessions: one per impression row, its hits at their ranks.
    dbn = fit_dbn(row, rank + 1, pair, clicked, n_pairs=len(names))
    truth = np.zeros(len(names))
    question = np.zeros(len(names), np.int64)
    for (qq, hit), code in names.items():
        truth[code] = c.grades[qq].get(hit, 0)
        question[code] = qq
    estimates = {
        "COEC": coec_value,
        "PBM": np.nan_to_num(pbm.attractiveness),
        "SDBN": np.nan_to_num(dbn.sdbn_attractiveness),
        "DBN": np.nan_to_num(dbn.attractiveness),
        "DBN a·s": np.nan_to_num(dbn.attractiveness * dbn.satisfaction),
        # No estimate, the bound: an order that agrees with every grade and ties nothing (τ-b's ceiling
        # for a continuous figure: √((n₀ − n_y) / n₀) when the grades tie n_y of the n₀ pairs).
        "untied truth": truth + np.arange(truth.size) * 1e-3 / max(truth.size, 1),
    }
    thresholds = {name: ATTRACTIVENESS_THRESHOLDS for name in estimates} | {"COEC": COEC_THRESHOLDS}
    figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in estimates}
    for qq in range(nq):
        members = np.flatnonzero(question == qq)
        if np.unique(truth[members]).size < 2:
            continue
        y = truth[members]
        for name, value in estimates.items():
            # To 3 decimals, as SRW prints COEC: EM leaves never-clicked answers at different tiny
            # figures, which would otherwise count as an order among answers the clicks cannot tell apart.
            x = np.round(value[members], 3 if name != "untied truth" else 9)
            stars = to_stars(value[members], thresholds[name]).astype(np.float64)
            figures[name].append((kendall_tau_b(x, y), somers_d(x, y), kendall_tau_b(stars, y)))
    means = {name: tuple(float(v) for v in np.nanmean(np.array(f), axis=0)) for name, f in figures.items()}
    return means, len(figures["COEC"])


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def report_aa(collections: list[CollectionVersions], models: list[str], args) -> None:
    print(
        f"## A/A: best version against itself, {args.aa_tests:,} experiments × {args.aa_queries:,} served queries"
    )
    print(
        "collection (version) | click model | significant at α = 0.05 (peeking after every query) | queries taking part"
    )
    for ci, c in enumerate(collections):
        best = max(c.versions, key=lambda k: np.nanmean(c.versions[k].ndcg))
        for mi, model in enumerate(models):
            rate, decisive = aa(c, best, model, args, seed=100 * ci + mi)
            print(f"{c.name} ({best}) | {model} | {rate:.2%} | {decisive:.0%} decisive", flush=True)


def report_sensitivity(collections: list[CollectionVersions], models: list[str], args) -> None:
    pairs = [
        (abs(float(np.nanmean(c.versions[b].ndcg - c.versions[a].ndcg))), c, a, b)
        for c in collections
        for a, b in itertools.permutations(c.versions, 2)
        if np.nanmean(c.versions[b].ndcg) > np.nanmean(c.versions[a].ndcg)
    ]
    print(f"\n## Sensitivity: {args.tests} experiments per cell, served queries to pick the better ≥ 95%")
    print(
        "target Δ | pair (ΔNDCG@10) | click model | interleaving: sign | interleaving: app verdict "
        "| A/B CTR: sign | A/B CTR: z-test | A/B queries with a click: sign | CTR worse / better | A/B ÷ interleaving (sign)"
    )
    for target in (0.02, 0.05):
        delta, c, a, b = min(pairs, key=lambda p: abs(p[0] - target))
        for mi, model in enumerate(models):
            started = time.perf_counter()
            r = sensitivity(c, a, b, model, args, seed=1000 + mi + int(target * 1000))
            ratio = "–"
            try:
                n_i = float(r["interleaving_sign"].replace(",", "").replace("> ", ""))
                n_ab = float(r["ab_sign"].replace(",", "").replace("≈ ", "").replace("> ", ""))
                ratio = f"{n_ab / n_i:.0f}×"
            except ValueError:
                pass
            print(
                f"{target} | {c.name} {a} → {b} ({delta:+.4f}) | {model} | {r['interleaving_sign']} | "
                f"{r['interleaving_verdict']} | {r['ab_sign']} | {r['ab_z']} | {r['ab_any']} | {r['ctr']} | {ratio} "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )


def report_agreement(collections: list[CollectionVersions], models: list[str], args) -> None:
    print(
        f"\n## Agreement: offline-significant pairs, online direction after {args.agree_queries:,} served "
        f"queries, {args.agree_tests} experiments per pair"
    )
    print(
        "click model | pairs | online direction = offline (majority) | experiments agreeing | disagreeing pairs"
    )
    for mi, model in enumerate(models):
        n, ok, exp_ok, wrong = agreement(collections, model, args, seed=2000 + mi)
        print(
            f"{model} | {n} | {ok}/{n} = {ok / max(n, 1):.0%} | {exp_ok}/{n * args.agree_tests} = "
            f"{exp_ok / max(n * args.agree_tests, 1):.0%} | {'; '.join(wrong) or '–'}",
            flush=True,
        )


def report_labels(collections: list[CollectionVersions], models: list[str], args) -> None:
    print(
        f"\n## Implicit labels: Kendall τ-b vs true grades, per question, {args.label_queries} questions/collection"
    )
    print(
        "collection | click model | impressions per question | questions | "
        + " | ".join(f"{name}: τ-b / D / τ-b stars" for name in LABEL_ESTIMATES)
    )
    for ci, c in enumerate(collections):
        for mi, model in enumerate(models):
            for impressions in (10, 100, 1000):
                started = time.perf_counter()
                means, n = implicit_labels(c, model, impressions, args, seed=3000 + 10 * ci + mi)
                figures = " | ".join(
                    "{:.3f} / {:.3f} / {:.3f}".format(*means[name]) for name in LABEL_ESTIMATES
                )
                print(
                    f"{c.name} | {model} | {impressions:,} | {n} | {figures} ({time.perf_counter() - started:.1f} s)",
                    flush=True,
                )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--collections", default="adi,cacm,cisi,covidfaq,semeval16b")
    parser.add_argument("--outside", type=Path, default=DEFAULT_OUTSIDE)
    parser.add_argument("--embeddings-cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--seed", type=int, default=0, help="the split's seed (bench_loop's)")
    parser.add_argument("--aa-tests", type=int, default=1000, help="A/A experiments per click model")
    parser.add_argument("--aa-queries", type=int, default=2000, help="served queries per A/A experiment")
    parser.add_argument("--tests", type=int, default=200, help="experiments per sensitivity cell")
    parser.add_argument("--max-queries", type=int, default=20000, help="longest sensitivity experiment")
    parser.add_argument("--agree-tests", type=int, default=9, help="experiments per pair (agreement)")
    parser.add_argument("--agree-queries", type=int, default=5000, help="served queries per experiment")
    parser.add_argument("--label-queries", type=int, default=100, help="questions per collection (labels)")
    parser.add_argument("--models", default=",".join(CLICK_MODELS))
    parser.add_argument("--parts", default=",".join(PARTS), help=f"of {', '.join(PARTS)}")
    parser.add_argument(
        "--versions-cache",
        type=Path,
        default=DEFAULT_CACHE / "online-versions",
        help="keep the versions' rankings and NDCG here, so a rerun skips the trainings ('' to rebuild)",
    )
    args = parser.parse_args()
    models = [m for m in args.models.split(",") if m]
    wall0, cpu0 = time.perf_counter(), cpu()
    print(
        f"bench_online: {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPUs {os.cpu_count()}; {load()}"
    )
    names = [n.strip() for n in args.collections.split(",") if n.strip()]
    cache = args.versions_cache / f"{'-'.join(names)}-seed{args.seed}.pickle" if args.versions_cache else None
    try:
        if cache is not None and cache.exists():
            collections = pickle.loads(cache.read_bytes())
            print(f"versions read from {cache}")
        else:
            collections = [build_versions(name, args) for name in names]
            if cache is not None:
                cache.parent.mkdir(parents=True, exist_ok=True)
                cache.write_bytes(pickle.dumps(collections))
    finally:
        shutil.rmtree(VAR_DIR, ignore_errors=True)
    print(f"versions built: wall {time.perf_counter() - wall0:.0f} s, CPU {cpu() - cpu0:.0f} s; {load()}\n")
    parts = set(args.parts.split(","))
    if "aa" in parts:
        report_aa(collections, models, args)
    if "sensitivity" in parts:
        report_sensitivity(collections, models, args)
    if "agreement" in parts:
        report_agreement(collections, models, args)
    if "labels" in parts:
        report_labels(collections, models, args)
    print(f"\ntotal wall {time.perf_counter() - wall0:.0f} s, CPU {cpu() - cpu0:.0f} s; {load()}")


if __name__ == "__main__":
    main()
