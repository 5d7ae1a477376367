"""An evaluation run's files: its rankings as a TREC run file, its per-question results as CSV or JSONL.

Pure writers over ``ResultRow`` (built by ``evaluation.selectors.run_export_rows``): no database access.

- TREC run (what ``trec_eval`` and ``manage.py score`` read): ``qid Q0 docid rank score tag``, one line
  per ranked answer. Runs store the ranker's order, not its scores, so the score is
  ``n − rank + 1`` for a ranking of ``n`` answers: strictly decreasing, so ``trec_eval`` (which orders
  by score) sees exactly the stored order. The tag is ``run-<id>``. Questions that failed are left out.
- CSV and JSONL: one row per question with the fields of the API's per-question results (full
  precision: these are data, not the pages' three-decimal display).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ResultRow:
    question_id: str
    question: str
    split: str
    ranked_answer_ids: list[str]
    labels: list[int | None]
    ndcg: float | None
    dcg: float | None
    ideal_dcg: float | None
    accuracy_hit: bool | None
    judged: float | None
    unlabelled_in_top_k: int
    error: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "question_id": self.question_id,
            "question": self.question,
            "split": self.split,
            "ndcg": self.ndcg,
            "dcg": self.dcg,
            "ideal_dcg": self.ideal_dcg,
            "accuracy_hit": self.accuracy_hit,
            "judged": self.judged,
            "unlabelled_in_top_k": self.unlabelled_in_top_k,
            "ranked_answer_ids": self.ranked_answer_ids,
            "labels": self.labels,
            "error": self.error,
        }


CSV_COLUMNS = [
    "question_id",
    "question",
    "split",
    "ndcg",
    "dcg",
    "ideal_dcg",
    "accuracy_hit",
    "judged",
    "unlabelled_in_top_k",
    "ranked_answer_ids",
    "labels",
    "error",
]


def write_trec_run(rows: Iterable[ResultRow], out: Any, *, tag: str) -> None:
    """``qid Q0 docid rank score tag`` lines; score = n − rank + 1 (see the module docstring)."""
    for row in rows:
        if row.error:
            continue
        n = len(row.ranked_answer_ids)
        for rank, answer_id in enumerate(row.ranked_answer_ids, start=1):
            out.write(f"{row.question_id} Q0 {answer_id} {rank} {n - rank + 1} {tag}\n")


def _cell(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, list):
        # Ids and labels space-separated, an unlabelled answer as "-", so the cell stays one column.
        return " ".join("-" if v is None else str(v) for v in value)
    return repr(value) if isinstance(value, float) else str(value)


def write_results_csv(rows: Iterable[ResultRow], out: Any) -> None:
    """A header, then one row per question; empty cells for unknown values, lists space-separated."""
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for row in rows:
        data = row.as_dict()
        writer.writerow([_cell(data[column]) for column in CSV_COLUMNS])


def write_results_jsonl(rows: Iterable[ResultRow], out: Any) -> None:
    for row in rows:
        out.write(json.dumps(row.as_dict(), ensure_ascii=False) + "\n")


# format name -> (content type, file extension)
RUN_EXPORTS = {
    "trec-run": ("text/plain", "run"),
    "csv": ("text/csv", "csv"),
    "jsonl": ("application/x-ndjson", "jsonl"),
}


def write_run_export(fmt: str, rows: Iterable[ResultRow], out: Any, *, run_id: int) -> None:
    """Write ``rows`` in ``fmt`` (one of ``RUN_EXPORTS``); ValueError naming the formats otherwise."""
    if fmt == "trec-run":
        write_trec_run(rows, out, tag=f"run-{run_id}")
    elif fmt == "csv":
        write_results_csv(rows, out)
    elif fmt == "jsonl":
        write_results_jsonl(rows, out)
    else:
        raise ValueError(f"format must be trec-run, csv or jsonl, not {fmt!r}")
