"""Ground-truth JSONL, one label a line (``LabelRow.as_dict``): written by ``export_ground_truth --format
jsonl`` and read back."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from corpus.formats.common import (
    MAX_QUESTION_CHARS,
    MAX_STARS,
    FormatError,
    checked_text,
    clean_id,
    nonblank_lines,
)
from corpus.formats.records import JudgmentRecord, LabelRow, QuestionRecord


def parse_ground_truth_jsonl(path: Path | str) -> tuple[list[QuestionRecord], list[JudgmentRecord]]:
    """Read ``export_ground_truth --format jsonl`` output back (stars are taken as they are)."""
    path = Path(path)
    name = path.name
    questions: dict[str, QuestionRecord] = {}
    judgments: list[JudgmentRecord] = []
    for line, raw in nonblank_lines(path):
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise FormatError(name, line, f"invalid JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise FormatError(name, line, "expected a JSON object per line")
        for key in ("question_id", "answer_id", "stars"):
            if key not in obj:
                raise FormatError(name, line, f'field "{key}" is missing')
        qid = clean_id(obj["question_id"], file=name, line=line, what='field "question_id"')
        aid = clean_id(obj["answer_id"], file=name, line=line, what='field "answer_id"')
        stars = obj["stars"]
        if isinstance(stars, bool) or not isinstance(stars, int) or not 0 <= stars <= MAX_STARS:
            raise FormatError(name, line, f'field "stars" must be 0–3, not {stars!r}')
        if qid not in questions and obj.get("question"):
            checked_text(
                str(obj["question"]), file=name, line=line, what='field "question"', limit=MAX_QUESTION_CHARS
            )
            split = obj.get("split")
            questions[qid] = QuestionRecord(
                qid, str(obj["question"]), split if split in {"train", "test"} else None, file=name, line=line
            )
        judgments.append(JudgmentRecord(qid, aid, stars, file=name, line=line))
    return list(questions.values()), judgments


def write_ground_truth_jsonl(rows: Iterable[LabelRow], out: io.TextIOBase | Any) -> None:
    for row in rows:
        out.write(json.dumps(row.as_dict(), ensure_ascii=False) + "\n")
