"""bench/bench_loop.py runs end to end on a tiny collection (its own SQLite, not the tests' database)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.http_client import HTTP

ROOT = Path(__file__).resolve().parents[2]
# ADI (82 answers, 35 questions), copied from ../shared/data/outside so the test needs nothing outside.
OUTSIDE = ROOT / "tests" / "data" / "outside"


def opensearch_indexes(url: str) -> set[str]:
    return {row["index"] for row in HTTP.get(f"{url}/_cat/indices?format=json", timeout=30).json()}


@pytest.fixture(scope="module")
def embeddings_dir(tmp_path_factory) -> Path:
    """One bench embeddings cache for both runs: the second reuses ADI's vectors the first encoded (6 s)."""
    return tmp_path_factory.mktemp("embeddings")


def test_bench_loop_smoke_run(embeddings_dir):
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "MODEL_DIR")}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_loop.py"),
            "--quick",
            "--collections",
            "adi",
            "--outside",
            str(OUTSIDE),
            "--rounds",
            "2",
            "--budget",
            "10",
            "--embeddings-cache",
            str(embeddings_dir),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "database sqlite" in out
    # Two rounds of the real queue spent the budget: 10 per question, half each round.
    rounds = [line for line in out.splitlines() if re.match(r"\| adi \| \d+ \| \d+ \(\d", line)]
    assert len(rounds) == 2
    # The cumulative ratings per question: at most the budget (the queue may run dry before it).
    spent = float(re.search(r"\| \d+ \((\d+\.\d)\)", rounds[-1]).group(1))
    assert 5.0 < spent <= 10.0
    assert "upper bound" in out and "gap closed" in out


def test_bench_loop_engine_smoke_run(embeddings_dir, opensearch):
    """--engine opensearch: the product's ranker is an engine ranker over a real node, the session's
    (--engine-url: this file runs with the real engines' group, tests/conftest.py), in an index of the
    bench's own that it removes at the end; the references are the engine alone, its untrained fusion and
    the upper bound."""
    indexes_before = opensearch_indexes(opensearch.url)
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "MODEL_DIR")}
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "bench_loop.py"),
            "--quick",
            "--collections",
            "adi",
            "--outside",
            str(OUTSIDE),
            "--rounds",
            "2",
            "--budget",
            "10",
            "--engine",
            "opensearch",
            "--engine-url",
            opensearch.url,
            "--embeddings-cache",
            str(embeddings_dir),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout
    assert "ranker: OpenSearch engine, its top 50 reranked" in out
    assert re.search(rf"OpenSearch at {re.escape(opensearch.url)}: running already, 82 answers indexed", out)
    assert opensearch_indexes(opensearch.url) == indexes_before  # the bench's own index removed
    assert "first champion v1 (engine)" in out
    assert "| engine alone | untrained fusion | upper bound (method) | upper − best untrained" in out
    rounds = [line for line in out.splitlines() if re.match(r"\| adi \| \d+ \| \d+ \(\d", line)]
    assert len(rounds) == 2
