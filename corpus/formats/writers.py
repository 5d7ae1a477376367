"""The export formats by name (``export_ground_truth --format``, the API's ground truth download)."""

from __future__ import annotations

from corpus.formats.ground_truth_jsonl import write_ground_truth_jsonl
from corpus.formats.rnr import write_rnr_csv
from corpus.formats.trec import write_trec_qrels

WRITERS = {"rnr-csv": write_rnr_csv, "trec-qrels": write_trec_qrels, "jsonl": write_ground_truth_jsonl}
