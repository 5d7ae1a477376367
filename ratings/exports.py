"""The ratings export: every rating with its rater and note, as CSV or JSONL (pure writers); and the two
collection exports as the files people download (``ground_truth_file``, ``ratings_file``): the API and the
trainer's export page serve the same bytes under the same names."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from corpus.formats.writers import WRITERS
from corpus.models import Collection, Split
from ratings.selectors import RatingRow, ground_truth_rows, rating_rows

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


# ground-truth format name (``corpus.formats.writers.WRITERS``) -> (content type, file extension)
GROUND_TRUTH_EXPORTS = {
    "jsonl": ("application/x-ndjson", "jsonl"),
    "rnr-csv": ("text/csv", "csv"),
    "trec-qrels": ("text/plain", "qrels"),
}
assert set(GROUND_TRUTH_EXPORTS) == set(WRITERS)
EXPORT_SPLITS = (Split.TRAIN, Split.TEST, "all")


@dataclass(frozen=True)
class ExportFile:
    """A download: its text, content type (UTF-8) and file name."""

    text: str
    content_type: str
    filename: str


def _check(*, fmt: str, formats: Iterable[str], split: str) -> None:
    """ValueError naming the field (``format: ...``, ``split: ...``) when either is not one we write."""
    if fmt not in formats:
        raise ValueError(f"format: must be {' or '.join(sorted(formats))}, not {fmt[:40]!r}.")
    if split not in EXPORT_SPLITS:
        raise ValueError(f"split: must be train, test or all, not {split[:40]!r}.")


def ground_truth_file(*, collection: Collection, fmt: str, split: str) -> ExportFile:
    """The collection's labels of ``split`` as a file (JSON lines, R&R CSV or TREC qrels), as
    ``export_ground_truth`` writes them; the caller checks who may see that split."""
    _check(fmt=fmt, formats=GROUND_TRUTH_EXPORTS, split=split)
    out = io.StringIO()
    WRITERS[fmt](ground_truth_rows(collection=collection, split=split), out)
    content_type, extension = GROUND_TRUTH_EXPORTS[fmt]
    return ExportFile(out.getvalue(), content_type, f"{collection.slug}-{split}.{extension}")


def ratings_file(*, collection: Collection, fmt: str, split: str) -> ExportFile:
    """Every rating of ``split`` with its rater and note as a file (CSV or JSON lines), as
    ``export_ratings`` writes them; for trainers (it names the raters)."""
    _check(fmt=fmt, formats=RATING_EXPORTS, split=split)
    out = io.StringIO()
    write_ratings(fmt, rating_rows(collection=collection, split=split), out)
    content_type, extension = RATING_EXPORTS[fmt]
    return ExportFile(out.getvalue(), content_type, f"{collection.slug}-ratings-{split}.{extension}")
