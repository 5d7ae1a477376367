"""Writing the answers' vectors into the engine once (issue 35; not a test; see bench/README.md, "Exports
with the vectors in the engine: written once").

    make engines && .venv/bin/python bench/bench_vectors_write.py [--engines opensearch,solr] [--changed 14]

For each engine (a real node started as the tests start it, the Cranfield demo's 1,400 answers indexed),
``rankers.export.vectors.engine_vectors_write`` with the demo's shipped vectors (no model needed), three
times: into an index without vectors (every answer written: what every export did before), the same
vectors again (what a second training's export does now: nothing written), and with ``--changed``
answers' vectors changed (as when their text changed: only those written). Each: wall seconds, this
process's CPU seconds, the node's CPU seconds (its JVM, from /proc), answers held and written.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_loop as loop  # noqa: E402 - sets Django up, with its own database
import numpy as np  # noqa: E402

from rankers.engine_config import validate_engine_config  # noqa: E402
from rankers.export.vectors import engine_vectors_write  # noqa: E402
from trainer.demo_vectors import DEMO_VECTORS_FILE  # noqa: E402


def _cpu(pid: int) -> float:
    """A process's user + system CPU seconds (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(engine: str, documents: list[dict[str, str]], vectors: np.ndarray, changed: int) -> None:
    ids = [d["id"] for d in documents]
    with tempfile.TemporaryDirectory(dir=loop.VAR_DIR) as tmp:
        node = loop.engine_start(engine, Path(tmp) / engine, documents)
        try:
            config = validate_engine_config({**node.config, "retries": 0})
            rows = []
            for step in ("first write", "same vectors again", f"{changed} changed"):
                if step.endswith("changed"):
                    vectors = vectors.copy()
                    vectors[:: len(ids) // changed][:changed] *= -1
                wall, cpu, jvm = time.perf_counter(), time.process_time(), _cpu(node.node.process.pid)
                done = engine_vectors_write(config=config, ids=ids, vectors=vectors)
                rows.append(
                    (
                        step,
                        time.perf_counter() - wall,
                        time.process_time() - cpu,
                        _cpu(node.node.process.pid) - jvm,
                        done,
                    )
                )
        finally:
            node.stop()
    for step, wall, cpu, jvm, done in rows:
        print(
            f"{engine:<10} {step:<20} wall {wall:6.2f} s  CPU here {cpu:5.2f} s  node {jvm:6.2f} s  "
            f"held {done.held}  written {done.written}",
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--engines", default="opensearch,solr")
    parser.add_argument("--changed", type=int, default=14)
    args = parser.parse_args()
    from tests.rankers.real_engines import cranfield_answers

    documents = cranfield_answers()
    with np.load(DEMO_VECTORS_FILE) as shipped:
        vectors = np.asarray(shipped["vectors"], dtype=np.float32)
    print(f"load average {os.getloadavg()[0]:.1f} at the start", flush=True)
    for engine in args.engines.split(","):
        measure(engine, documents, vectors, args.changed)
    print(f"load average {os.getloadavg()[0]:.1f} at the end", flush=True)


if __name__ == "__main__":
    main()
