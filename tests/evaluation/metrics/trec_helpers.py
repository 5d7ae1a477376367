"""Shared by the tests of :mod:`evaluation.metrics.trec`: trec_eval's test files and a reference
implementation of its semantics, one query at a time."""

from __future__ import annotations

import math
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data" / "trec_eval"
MEASURE_PREFIXES = ("ndcg_cut_", "success_", "P_", "recall_", "runid", "num_q")


def expected_lines(name: str) -> list[str]:
    """The lines of a trec_eval expected output for the measures we implement."""
    return [line.rstrip("\n") for line in (DATA / name).open() if line.startswith(MEASURE_PREFIXES)]


ALL_OURS = ["runid", "num_q", "P", "recall", "ndcg_cut", "success"]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def reference(qids, docnos, scores, labels, level=1, complete=False):
    """Straightforward trec_eval semantics, one query at a time."""
    runs: dict[str, list[tuple[float, bytes]]] = {}
    for q, d, s in zip(qids, docnos, scores, strict=True):
        runs.setdefault(q, []).append((s, d.encode()))
    judged: dict[str, dict[bytes, int]] = {}
    for (q, d), g in labels.items():
        judged.setdefault(q, {})[d.encode()] = g
    out: dict[str, list[float]] = {}
    for q in sorted(judged, key=str.encode):
        if q not in runs and not complete:
            continue
        ranked = [d for _, d in sorted(runs.get(q, [(1.0, b"ceci_nest_pas_un_docno")]), reverse=True)]
        rel = [judged[q].get(d, -1) for d in ranked]
        rel = [-2 if r < -1 or (r == -1 and d in judged[q]) else r for r, d in zip(rel, ranked, strict=True)]
        ideal = sorted((g for g in judged[q].values() if g > 0), reverse=True)
        num_rel = sum(g >= max(level, 0) for g in judged[q].values())

        def dcg(gains, k):
            return sum(g / math.log2(i + 2) for i, g in enumerate(gains[:k]) if g > 0)  # rank i + 1

        for k in (5, 10, 100):
            best = dcg(ideal, k)
            out.setdefault(f"ndcg_cut_{k}", []).append(dcg(rel, k) / best if best > 0 else 0.0)
        for k in (1, 3):
            out.setdefault(f"success_{k}", []).append(float(any(r >= level for r in rel[:k])))
        out.setdefault("P_7", []).append(sum(r >= level for r in rel[:7]) / 7)
        hits = sum(r >= level for r in rel[:9])
        out.setdefault("recall_9", []).append(hits / num_rel if num_rel else 0.0)
    return out
