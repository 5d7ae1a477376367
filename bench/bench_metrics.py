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
  (parsing not timed): ranking, label lookup, metrics;
* ``score_files``: ``evaluation.metrics.trec.score_files`` end to end, i.e. what ``manage.py score``
  runs after argument parsing: read both files, evaluate, format the output.

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


def phase(name: str, qrels_path: Path, run_path: Path, out: Path | None, repeat: int) -> dict:
    """Run one phase ``repeat`` times in this (fresh) process; report the fastest time and peak RSS."""
    sys.path.insert(0, str(ROOT))
    from evaluation.metrics import trec

    result: dict = {"phase": name}
    times = []
    if name == "pytrec_dicts":
        qrels, run = _parse_python(qrels_path, run_path)
        for _ in range(repeat):
            start = time.perf_counter()
            values = _pytrec(qrels, run)
            times.append(time.perf_counter() - start)
        if out is not None:
            qids = sorted(values, key=str.encode)
            np.savez(
                out,
                ndcg=np.array([values[q]["ndcg_cut_10"] for q in qids]),
                success=np.array([values[q]["success_5"] for q in qids]),
            )
    elif name == "pytrec_files":
        for _ in range(repeat):
            start = time.perf_counter()
            qrels, run = _parse_python(qrels_path, run_path)
            _pytrec(qrels, run)
            times.append(time.perf_counter() - start)
            del qrels, run
    elif name == "engine_arrays":
        qrels_parsed = trec.read_qrels(qrels_path)
        run_parsed = trec.read_run(run_path)
        for _ in range(repeat):
            start = time.perf_counter()
            evaluation = trec.evaluate(qrels_parsed, run_parsed, MEASURES)
            times.append(time.perf_counter() - start)
        if out is not None:
            np.savez(out, ndcg=evaluation.values["ndcg_cut_10"], success=evaluation.values["success_5"])
    elif name == "score_files":
        for _ in range(repeat):
            start = time.perf_counter()
            lines = trec.score_files(qrels_path, run_path, MEASURES, per_query=True)
            times.append(time.perf_counter() - start)
            result["lines"] = len(lines)
            del lines
    else:
        raise SystemExit(f"unknown phase {name}")
    result["seconds"] = min(times)
    result["peak_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return result


def run_child(name: str, qrels_path: Path, run_path: Path, repeat: int, out: Path | None = None) -> dict:
    command = [sys.executable, __file__, "--phase", name, "--qrels", str(qrels_path), "--run", str(run_path)]
    command += ["--repeat", str(repeat)]
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
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--qrels", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--run", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(phase(args.phase, args.qrels, args.run, args.out, args.repeat)))
        return

    args.data_dir.mkdir(parents=True, exist_ok=True)
    print(f"numpy {np.__version__}, {os.cpu_count()} CPUs; measures {', '.join(MEASURES)}")
    header = (
        f"{'Q':>8} | {'pytrec dicts':>18} | {'engine arrays':>18} | {'ratio':>6} | "
        f"{'pytrec files':>18} | {'score e2e':>18} | {'ratio':>6} | max|diff|"
    )
    print(header)
    print("-" * len(header))
    for questions in args.questions:
        qrels_path, run_path = generate(questions, args.data_dir)
        ours_out = args.data_dir / f"ours.{questions}.npz"
        theirs_out = args.data_dir / f"pytrec.{questions}.npz"
        pytrec_dicts = run_child("pytrec_dicts", qrels_path, run_path, args.repeat, theirs_out)
        engine = run_child("engine_arrays", qrels_path, run_path, args.repeat, ours_out)
        pytrec_files = run_child("pytrec_files", qrels_path, run_path, args.repeat)
        score = run_child("score_files", qrels_path, run_path, args.repeat)
        ours, theirs = np.load(ours_out), np.load(theirs_out)
        diff = max(float(np.abs(ours[k] - theirs[k]).max()) for k in ("ndcg", "success"))

        def fmt(result: dict) -> str:
            return f"{result['seconds']:.3f}s {result['peak_mb']:.0f}MB".rjust(18)

        print(
            f"{questions:>8} | {fmt(pytrec_dicts)} | {fmt(engine)} | "
            f"{pytrec_dicts['seconds'] / engine['seconds']:5.1f}x | {fmt(pytrec_files)} | {fmt(score)} | "
            f"{pytrec_files['seconds'] / score['seconds']:5.1f}x | {diff:.1e}"
        )
        print(
            f"{'':>8}   throughput: pytrec {questions / pytrec_dicts['seconds']:,.0f} q/s, engine "
            f"{questions / engine['seconds']:,.0f} q/s, pytrec+parse {questions / pytrec_files['seconds']:,.0f} q/s, "
            f"score {questions / score['seconds']:,.0f} q/s"
        )


if __name__ == "__main__":
    main()
