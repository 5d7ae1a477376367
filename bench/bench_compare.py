"""Benchmark of comparing N runs (not a test; see bench/README.md).

    .venv/bin/python bench/bench_compare.py                      # Q = 45 450 2,000; N = 2 4 6
    .venv/bin/python bench/bench_compare.py --questions 45 --runs 6

Measures ``evaluation.metrics.pairwise.compare_pairs`` (what the N-run compare page computes when its
figures are not cached: N(N − 1)/2 pairs, 10,000 bootstrap resamples and permutations each, then Holm)
on Q questions × N runs of random NDCG values (5% undefined). The reference, measured in the same run,
is one ``compare_runs`` on the same Q questions: the statistics of the two-run compare page.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from evaluation.metrics.pairwise import compare_pairs  # noqa: E402
from evaluation.metrics.stats import compare_runs  # noqa: E402


def timed(work, repeats: int) -> float:
    """The best of ``repeats`` wall-clock times of ``work()`` (the least disturbed by other load)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, nargs="+", default=[45, 450, 2000])
    parser.add_argument("--runs", type=int, nargs="+", default=[2, 4, 6])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    print(f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'questions':>9} {'runs':>4} {'pairs':>5} {'seconds':>8} {'×1 pair':>8}")
    for q in args.questions:
        matrix = rng.random((q, max(args.runs)))
        matrix[rng.random(matrix.shape) < 0.05] = np.nan
        reference = timed(lambda m=matrix: compare_runs(m[:, 1], m[:, 0], seed=0), args.repeats)
        print(f"{q:>9} {'ref':>4} {1:>5} {reference:>8.3f} {1:>8.1f}")
        for n in args.runs:
            seconds = timed(lambda m=matrix, n=n: compare_pairs(m[:, :n], seed=0), args.repeats)
            pairs = n * (n - 1) // 2
            print(f"{q:>9} {n:>4} {pairs:>5} {seconds:>8.3f} {seconds / reference:>8.1f}")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
