"""What the tests' real engines cost (not a test; see bench/README.md, "Real engines in the tests").

    make engines && .venv/bin/python bench/bench_engines.py

Starts each node as the test fixtures do (tests/rankers/real_engines.py: its launcher in engines/, a
512 MB heap, data in a fresh temporary directory), one engine at a time, and reports: seconds from
the process start to its READY line, seconds to index the 1,400 Cranfield answers through its HTTP API,
the 150 Cranfield questions ranked through the preset (``EngineBackend``, one at a time: total and
median seconds), the resident memory then and its peak (``VmRSS``/``VmHWM``), the data directory on disk
after indexing, and the jars the launcher loads (the Maven artifacts on its classpath).
"""

from __future__ import annotations

import csv
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE", "1")

import django  # noqa: E402

django.setup()

from rankers.base import RankQuery  # noqa: E402
from rankers.engine import EngineBackend  # noqa: E402
from rankers.engine_config import validate_engine_config  # noqa: E402
from tests.rankers import real_engines as real  # noqa: E402

MB = 1024 * 1024


def du(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def status_mb(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def jars_mb(module: str) -> float:
    paths = (real.ENGINES / module / "target" / "classpath.txt").read_text().strip().split(os.pathsep)
    return sum(Path(p).stat().st_size for p in paths) / MB


def questions() -> list[str]:
    with (real.ROOT / "trainer" / "demo_data" / "cranfield-gt.csv").open(newline="") as f:
        return [row[0] for row in csv.reader(f) if row]


def measure(name: str, module: str, start, index, config) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / module
        if module == "solr":
            home.mkdir()
        node = start(home)
        try:
            began = time.monotonic()
            index(node)
            indexed = time.monotonic() - began
            ranker = EngineBackend(config=validate_engine_config(config(node)))
            times = []
            for text in questions():
                began = time.monotonic()
                ranker.rank(RankQuery("q", text), 10)
                times.append(time.monotonic() - began)
            rss, peak = status_mb(node.process.pid, "VmRSS"), status_mb(node.process.pid, "VmHWM")
            data = du(home) / MB
        finally:
            node.stop()
    print(
        f"{name:<11} start {node.start_seconds:5.1f} s  index {indexed:4.1f} s  "
        f"{len(times)} questions {sum(times):4.2f} s (median {statistics.median(times) * 1000:4.1f} ms)  "
        f"RSS {rss:4.0f} MB (peak {peak:4.0f})  data {data:4.1f} MB  jars {jars_mb(module):4.0f} MB"
    )


def main() -> None:
    def start_opensearch(home: Path) -> real.EngineNode:
        command = real.java_command("opensearch", "OpenSearchNode", str(real.free_port()), str(home))
        return real.start_node("OpenSearch", home, command)

    def start_solr(home: Path) -> real.EngineNode:
        configsets = real.ENGINES / "solr" / "configsets"
        command = real.java_command("solr", "SolrNode", str(real.free_port()), str(home), str(configsets))
        return real.start_node("Solr", home, command)

    measure(
        "OpenSearch",
        "opensearch",
        start_opensearch,
        lambda node: real.opensearch_index_cranfield(node.url, "cranfield"),
        lambda node: {"preset": "opensearch", "url": f"{node.url}/cranfield/_search", "retries": 0},
    )
    measure(
        "Solr",
        "solr",
        start_solr,
        lambda node: real.solr_index_cranfield(node.url, "cranfield"),
        lambda node: {"preset": "solr", "url": f"{node.url}/cranfield/select", "retries": 0},
    )


if __name__ == "__main__":
    main()
