"""The ratings export: every rating with its rater and note, as CSV or JSONL (pure writers)."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import Any

from ratings.selectors import RatingRow

RATING_COLUMNS = [
    "question_id",
    "question",
    "split",
    "answer_id",
    "rater",
    "stars",
    "source",
    "note",
    "updated_at",
]

# format name -> (content type, file extension)
RATING_EXPORTS = {"csv": ("text/csv", "csv"), "jsonl": ("application/x-ndjson", "jsonl")}


def write_ratings(fmt: str, rows: Iterable[RatingRow], out: Any) -> None:
    """CSV (a header, then one rating per row) or JSONL (one object per line); ValueError otherwise."""
    if fmt == "csv":
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(RATING_COLUMNS)
        for row in rows:
            data = row.as_dict()
            writer.writerow([data[column] for column in RATING_COLUMNS])
    elif fmt == "jsonl":
        for row in rows:
            out.write(json.dumps(row.as_dict(), ensure_ascii=False) + "\n")
    else:
        raise ValueError(f"format must be csv or jsonl, not {fmt!r}")
