"""Benchmark of the metrics engine against pytrec_eval (not a test; see bench/README.md).

    .venv/bin/python bench/bench_metrics.py                 # Q = 1,000 10,000 100,000
    .venv/bin/python bench/bench_metrics.py --questions 1000 10000

Data: Q questions x 100 retrieved answers (scores rounded to 2 decimals, so many ties), 20-40
labelled answers per question (15-25 of the retrieved ones and 5-15 others, grades 0-3, mean 30),
docnos like ``doc01234567``, written once as TREC files under --data-dir.  Measures: per-question NDCG@10 and accuracy@5 (``ndcg_cut.10``,
``success.5``).  Every phase runs in a fresh interpreter so its peak memory (``ru_maxrss``) is its own:

* ``pytrec_dicts``: pytrec_eval ``RelevanceEvaluator(qrels).evaluate(run)`` from in-memory dicts
  (file parsing not timed; the peak includes the dicts);
* ``pytrec_files``: the same, with the files parsed in Python (timed);
* ``engine_arrays``: ``evaluation.metrics.trec.evaluate`` on the parsed ``TrecQrels``/``TrecRun``
  (parsing not timed): ranking, label lookup, metrics; with 1 thread and with ``--threads``;
* ``score_files``: ``evaluation.metrics.trec.score_files`` end to end, i.e. what ``manage.py score``
  runs after argument parsing: read both files, evaluate, format the output lines (the ``all``
  summary; ``score_files_q``: also the per-query lines of ``-q``).

The per-question values of ``engine_arrays`` and ``pytrec_dicts`` are compared (max abs difference).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
MEASURES = ["ndcg_cut.10", "success.5"]
DEPTH = 100
LABELLED_RETRIEVED = (15, 25)  # per question: labelled answers among the retrieved (range)
LABELLED_OTHER = (5, 15)  # ... and labelled answers not retrieved (mean total: 30)


def generate(questions: int, directory: Path, seed: int = 0) -> tuple[Path, Path]:
    """Write qrels and run files for ``questions`` questions (skipped when already there)."""
    qrels_path = directory / f"qrels.{questions}.txt"
    run_path = directory / f"run.{questions}.txt"
    if qrels_path.exists() and run_path.exists():
        return qrels_path, run_path
    rng = np.random.default_rng(seed)
    collection = max(1_000_000, questions * 10)
    with open(run_path, "w") as run, open(qrels_path, "w") as qrels:
        for start in range(0, questions, 5000):
            stop = min(questions, start + 5000)
            n = stop - start
            # distinct documents per question: a random offset and stride into the collection
            base = rng.integers(0, collection, size=(n, 1))
            docs = (base + np.arange(DEPTH + LABELLED_OTHER[1]) * 7919) % collection
            scores = np.round(rng.random((n, DEPTH)), 2)
            grades = rng.integers(0, 4, size=(n, LABELLED_RETRIEVED[1] + LABELLED_OTHER[1]))
            picked = np.argsort(rng.random((n, DEPTH)), axis=1)[:, : LABELLED_RETRIEVED[1]]
            n_retrieved = rng.integers(LABELLED_RETRIEVED[0], LABELLED_RETRIEVED[1] + 1, size=n)
            n_other = rng.integers(LABELLED_OTHER[0], LABELLED_OTHER[1] + 1, size=n)
            run_lines = []
            qrel_lines = []
            for i in range(n):
                qid = f"q{start + i}"
                row_docs = docs[i].tolist()
                row_scores = scores[i].tolist()
                run_lines.extend(
                    f"{qid} Q0 doc{row_docs[r]:08d} {r + 1} {row_scores[r]:.2f} bench\n" for r in range(DEPTH)
                )
                labelled = (
                    docs[i, picked[i, : n_retrieved[i]]].tolist()
                    + docs[i, DEPTH : DEPTH + n_other[i]].tolist()
                )
                qrel_lines.extend(
                    f"{qid} 0 doc{d:08d} {g}\n" for d, g in zip(labelled, grades[i].tolist(), strict=False)
                )
            run.write("".join(run_lines))
            qrels.write("".join(qrel_lines))
    return qrels_path, run_path


# ------------------------------------------------------------------------------------ phases (children)


def _parse_python(qrels_path: Path, run_path: Path) -> tuple[dict, dict]:
    qrels: dict[str, dict[str, int]] = {}
    with open(qrels_path) as handle:
        for line in handle:
            qid, _, docno, grade = line.split()
            qrels.setdefault(qid, {})[docno] = int(grade)
    run: dict[str, dict[str, float]] = {}
    with open(run_path) as handle:
        for line in handle:
            qid, _, docno, _, score, _ = line.split()[:6]
            run.setdefault(qid, {})[docno] = float(score)
    return qrels, run


def _pytrec(qrels: dict, run: dict) -> dict:
    import pytrec_eval

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(MEASURES))
    return evaluator.evaluate(run)


def phase(name: str, qrels_path: Path, run_path: Path, out: Path | None, repeat: int, threads: int) -> dict:
    """Run one phase ``repeat`` times in this (fresh) process; report the fastest run and peak RSS."""
    sys.path.insert(0, str(ROOT))
    from evaluation.metrics import trec

    timings: list[tuple[float, float]] = []

    def timed(work):  # (wall, cpu) of one call; cpu is summed over threads
        wall, cpu = time.perf_counter(), time.process_time()
        value = work()
        timings.append((time.perf_counter() - wall, time.process_time() - cpu))
        return value

    if name == "pytrec_dicts":
        qrels, run = _parse_python(qrels_path, run_path)
        for _ in range(repeat):
            values = timed(lambda: _pytrec(qrels, run))
        if out is not None:
            qids = sorted(values, key=str.encode)
            np.savez(
                out,
                ndcg=np.array([values[q]["ndcg_cut_10"] for q in qids]),
                success=np.array([values[q]["success_5"] for q in qids]),
            )
    elif name == "pytrec_files":
        for _ in range(repeat):
            timed(lambda: _pytrec(*_parse_python(qrels_path, run_path)))
    elif name == "engine_arrays":
        qrels_parsed = trec.read_qrels(qrels_path)
        run_parsed = trec.read_run(run_path)
        for _ in range(repeat):
            evaluation = timed(lambda: trec.evaluate(qrels_parsed, run_parsed, MEASURES, threads=threads))
        if out is not None:
            np.savez(out, ndcg=evaluation.values["ndcg_cut_10"], success=evaluation.values["success_5"])
    elif name in ("score_files", "score_files_q"):
        per_query = name == "score_files_q"
        for _ in range(repeat):
            timed(
                lambda: trec.score_files(qrels_path, run_path, MEASURES, per_query=per_query, threads=threads)
            )
    else:
        raise SystemExit(f"unknown phase {name}")
    wall, cpu = min(timings)
    return {
        "phase": name,
        "wall": wall,
        "cpu": cpu,
        "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def run_child(
    name: str, paths: tuple[Path, Path], repeat: int, threads: int = 1, out: Path | None = None
) -> dict:
    qrels_path, run_path = paths
    command = [sys.executable, __file__, "--phase", name, "--qrels", str(qrels_path), "--run", str(run_path)]
    command += ["--repeat", str(repeat), "--threads", str(threads)]
    if out is not None:
        command += ["--out", str(out)]
    completed = subprocess.run(command, check=True, capture_output=True, text=True)
    return json.loads(completed.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------------------------ driver


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--questions", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    parser.add_argument("--data-dir", type=Path, default=Path(tempfile.gettempdir()) / "rank-trainer-bench")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per phase (the fastest counts)")
    parser.add_argument(
        "--threads", type=int, default=os.cpu_count() or 1, help="threads for the parallel rows"
    )
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--qrels", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--run", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.qrels, args.run, args.out, args.repeat, args.threads)))
        return

    args.data_dir.mkdir(parents=True, exist_ok=True)
    load = os.getloadavg()[0]
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs, load average {load:.1f}; {', '.join(MEASURES)}")
    print("times: fastest of", args.repeat, "runs; cpu = process CPU time (summed over threads)")
    for questions in args.questions:
        paths = generate(questions, args.data_dir)
        ours_out = args.data_dir / f"ours.{questions}.npz"
        theirs_out = args.data_dir / f"pytrec.{questions}.npz"
        rows = [
            ("pytrec_eval, in-memory dicts", run_child("pytrec_dicts", paths, args.repeat, out=theirs_out)),
            ("engine, parsed arrays, 1 thread", run_child("engine_arrays", paths, args.repeat, 1, ours_out)),
            (
                f"engine, parsed arrays, {args.threads} threads",
                run_child("engine_arrays", paths, args.repeat, args.threads),
            ),
            ("pytrec_eval + Python file parsing", run_child("pytrec_files", paths, args.repeat)),
            ("score end to end, 1 thread", run_child("score_files", paths, args.repeat, 1)),
            (
                f"score end to end, {args.threads} threads",
                run_child("score_files", paths, args.repeat, args.threads),
            ),
            ("score -q end to end, 1 thread", run_child("score_files_q", paths, args.repeat, 1)),
        ]
        ours, theirs = np.load(ours_out), np.load(theirs_out)
        diff = max(float(np.abs(ours[k] - theirs[k]).max()) for k in ("ndcg", "success"))
        print(f"\nQ = {questions:,}: max |ours - pytrec_eval| over NDCG@10 and accuracy@5 = {diff:.1e}")
        print(f"  {'phase':<40} {'wall s':>8} {'cpu s':>8} {'peak MB':>8} {'q/s':>10} {'vs pytrec':>18}")
        for label, result in rows:
            baseline = rows[0][1] if "engine" in label or "dicts" in label else rows[3][1]
            ratio = (
                f"{baseline['wall'] / result['wall']:.1f}x wall {baseline['cpu'] / result['cpu']:.1f}x cpu"
            )
            print(
                f"  {label:<40} {result['wall']:8.3f} {result['cpu']:8.3f} {result['peak_mb']:8.0f} "
                f"{questions / result['wall']:10,.0f} {ratio:>18}"
            )
    print(f"\nload average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
