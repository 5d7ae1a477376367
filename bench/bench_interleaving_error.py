"""Type-I error and power of the interleaving verdict's sequential test under continuous monitoring
(issue 36 §2; not a test, see bench/README.md).

    .venv/bin/python bench/bench_interleaving_error.py                       # 2,000 tests x 5,000 queries
    .venv/bin/python bench/bench_interleaving_error.py --tests 500 --queries 2000

Each simulated test is a stream of queries that took part (:mod:`evaluation.online.credit`), each a
win, a loss or a tie for the challenger, drawn independently:

* A/A: P(win) = P(loss) = 0.2, P(tie) = 0.6 (the champion against itself: by the coin of team draft a
  query is as likely won as lost); and a heterogeneous A/A where each query's share of decisive
  outcomes is drawn from U(0.05, 0.75) (busy and quiet queries mixed): the null still holds per query;
* true effects Δ = 0.01, 0.02, 0.05: P(win) = 0.2 + Δ, P(loss) = 0.2 − Δ, P(tie) = 0.6.

The page is looked at after every ``--every`` queries (10) up to ``--queries`` (5,000): a test is
significant when the always-valid p-value (``evaluation.online.sequential_p_values``) is ≤ 0.05 at any
look; "every query" looks after each one. The reference, measured on the same streams: the classical
two-sided z-test of mean(score) = 0 (score +1/−1/0, plug-in variance), once at the end (its nominal 5%)
and peeked at every look (what a page without a sequential test would do). Power counts only verdicts
in the true direction; "median queries" is the median look at which those tests first became significant.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from evaluation.online import KEEP_GOING, Tally, online_verdict, sequential_p_values

ALPHA = 0.05
Z = 1.959963984540054
BLOCK = 200  # simulated tests per vectorised block


def _streams(rng: np.random.Generator, tests: int, queries: int, effect: float, heterogeneous: bool):
    if heterogeneous:
        decisive = rng.uniform(0.05, 0.75, size=(tests, queries))
        u = rng.random((tests, queries))
        return np.where(u < decisive / 2, 1, np.where(u < decisive, -1, 0)).astype(np.int8)
    u = rng.random((tests, queries))
    win, loss = 0.2 + effect, 0.2 - effect
    return np.where(u < win, 1, np.where(u < win + loss, -1, 0)).astype(np.int8)


def _z_significant(x: np.ndarray, looks: np.ndarray) -> np.ndarray:
    """(tests, looks) significance of the classical z-test at each look."""
    s = np.cumsum(x, axis=1, dtype=np.float64)[:, looks - 1]
    s2 = np.cumsum(x.astype(np.float64) ** 2, axis=1)[:, looks - 1]
    n = looks.astype(np.float64)
    mean = s / n
    var = np.maximum(s2 / n - mean**2, 0.0) * n / np.maximum(n - 1, 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = mean / np.sqrt(var / n)
    return np.abs(np.nan_to_num(z)) > Z


def scenario(args, *, effect: float, mixture: float, heterogeneous: bool = False, seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    looks = np.arange(args.every, args.queries + 1, args.every)
    sig_looks = sig_every = z_end = z_peek = 0
    first_looks: list[np.ndarray] = []
    for start in range(0, args.tests, BLOCK):
        x = _streams(rng, min(BLOCK, args.tests - start), args.queries, effect, heterogeneous)
        p = sequential_p_values(x, mixture=mixture)  # after every query
        at_looks = p[:, looks - 1] <= ALPHA
        direction = np.sign(np.cumsum(x, axis=1, dtype=np.int64)[:, looks - 1])
        wanted = 1 if effect > 0 else 0
        hit = at_looks & ((direction == wanted) if effect > 0 else True)
        ever = hit.any(axis=1)
        sig_looks += int(ever.sum())
        sig_every += int((p[:, -1] <= ALPHA).sum())  # the running minimum: any query
        first_looks.append(looks[hit.argmax(axis=1)[ever]])
        z = _z_significant(x, looks)
        z_end += int(z[:, -1].sum())
        z_peek += int(z.any(axis=1).sum())
    firsts = np.concatenate(first_looks)
    return {
        "looks": sig_looks / args.tests,
        "every": sig_every / args.tests,
        "z_end": z_end / args.tests,
        "z_peek": z_peek / args.tests,
        "median": int(np.median(firsts)) if firsts.size else None,
    }


def calibration(args, *, effect: float, checkpoint: int, horizon: int, seed: int = 7) -> dict:
    """How often "keep going: about N more queries" is right: of the tests still going at
    ``checkpoint`` queries, the share significant (in the true direction) by checkpoint + N."""
    rng = np.random.default_rng(seed)
    x = _streams(rng, args.calibration_tests, horizon, effect, False)
    p = sequential_p_values(x)
    running = np.cumsum(x, axis=1, dtype=np.int64)
    estimates, right = [], 0
    for row in range(x.shape[0]):
        head = x[row, :checkpoint]
        counts = Tally(
            impressions=checkpoint,
            queries_with_clicks=checkpoint,
            wins=int((head == 1).sum()),
            losses=int((head == -1).sum()),
            ties=int((head == 0).sum()),
        )
        verdict = online_verdict(counts, p_floor=float(p[row, checkpoint - 1]))
        if verdict.verdict != KEEP_GOING or verdict.more_queries is None:
            continue
        estimates.append(verdict.more_queries)
        by = min(checkpoint + verdict.more_queries, horizon) - 1
        crossed = np.flatnonzero(p[row, : by + 1] <= ALPHA)
        right += bool(crossed.size) and running[row, crossed[0]] > 0
    return {
        "going": len(estimates),
        "median": int(np.median(estimates)),
        "right": right / max(len(estimates), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=2000, help="simulated tests per scenario")
    parser.add_argument("--queries", type=int, default=5000, help="queries (that took part) per test")
    parser.add_argument("--every", type=int, default=10, help="look at the page after this many queries")
    parser.add_argument("--mixtures", type=float, nargs="+", default=[10.0, 30.0, 100.0, 300.0, 1000.0])
    parser.add_argument("--calibration-tests", type=int, default=400, help="tests for the N-more estimate")
    args = parser.parse_args()
    se = math.sqrt(ALPHA * (1 - ALPHA) / args.tests)
    print(f"{args.tests:,} tests x {args.queries:,} queries, looked at every {args.every}; α = {ALPHA}")
    print(f"(binomial standard error of a 5% rate over {args.tests:,} tests: {se:.2%})\n")
    print(
        "mixture a | scenario | significant, looks | any query | z-test at end | z-test peeked | median queries"
    )
    for mixture in args.mixtures:
        for name, effect, hetero in [
            ("A/A", 0.0, False),
            ("A/A heterogeneous", 0.0, True),
            ("Δ = 0.01", 0.01, False),
            ("Δ = 0.02", 0.02, False),
            ("Δ = 0.05", 0.05, False),
        ]:
            started = time.perf_counter()
            r = scenario(
                args, effect=effect, mixture=mixture, heterogeneous=hetero, seed=int(effect * 1000) + hetero
            )
            print(
                f"{mixture:g} | {name} | {r['looks']:.2%} | {r['every']:.2%} | {r['z_end']:.2%} | "
                f"{r['z_peek']:.2%} | {r['median'] if r['median'] is not None else '–'} "
                f"({time.perf_counter() - started:.1f} s)",
                flush=True,
            )

    print('\n"keep going: about N more queries" (the app\'s mixture), tests still going at the checkpoint:')
    print("true Δ | checkpoint | still going | median N | significant by checkpoint + N")
    for effect, checkpoint in [(0.02, 500), (0.02, 1500), (0.05, 200)]:
        r = calibration(args, effect=effect, checkpoint=checkpoint, horizon=40_000)
        print(f"{effect} | {checkpoint:,} | {r['going']} | {r['median']:,} | {r['right']:.0%}", flush=True)


if __name__ == "__main__":
    main()
