"""Retrieve and Rank: documents read, ground truth read and written.

- Documents: Solr bulk-add JSON, ``{"add": {"doc": {...}}, "add": {...}, ...}``. The key ``"add"``
  repeats once per document, so it is parsed with ``object_pairs_hook`` (a plain ``json.load`` keeps
  only the last document).
- Ground truth CSV: ``"question","answer_id","grade","answer_id","grade",...``. Rows carry no question
  id; the id is derived from the normalised question text.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from corpus.formats.common import (
    MAX_BODY_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TITLE_CHARS,
    FormatError,
    checked_text,
    clean_id,
    has_nul,
    question_id_from_text,
    read_text,
)
from corpus.formats.grades import GradeMap, apply_grade
from corpus.formats.records import AnswerRecord, JudgmentRecord, LabelRow, QuestionRecord


def parse_rnr_documents(path: Path | str) -> list[AnswerRecord]:
    path = Path(path)
    name = path.name
    text = read_text(path)
    try:
        pairs = json.loads(text, object_pairs_hook=lambda items: items)
    except json.JSONDecodeError as exc:
        raise FormatError(name, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(pairs, list):
        raise FormatError(name, 1, 'expected a JSON object of {"add": {"doc": {...}}, ...}')
    records: list[AnswerRecord] = []
    seen: set[str] = set()
    for command, value in pairs:
        if command in {"commit", "optimize", "delete"}:
            continue
        position = f"document {len(records) + 1}"
        if command != "add":
            raise FormatError(name, None, f'{position}: unknown command "{command}" (expected "add")')
        doc = dict(value).get("doc") if isinstance(value, list) else None
        if not isinstance(doc, list):
            raise FormatError(name, None, f'{position}: "add" has no "doc" object')
        fields = dict(doc)
        if "id" not in fields:
            raise FormatError(name, None, f'{position}: field "id" is missing')
        external_id = clean_id(fields.pop("id"), file=name, line=None, what=f'{position}: field "id"')
        if external_id in seen:
            raise FormatError(name, None, f"{position}: duplicate id {external_id!r}")
        seen.add(external_id)
        title, body = fields.pop("title", ""), fields.pop("body", "")
        for field_name, field_value, limit in (
            ("title", title, MAX_TITLE_CHARS),
            ("body", body, MAX_BODY_CHARS),
        ):
            if not isinstance(field_value, str):
                raise FormatError(
                    name, None, f'{position} (id {external_id}): field "{field_name}" must be text'
                )
            checked_text(
                field_value,
                file=name,
                line=None,
                what=f'{position} (id {external_id}): field "{field_name}"',
                limit=limit,
            )
        metadata = {key: val for key, val in fields.items() if not isinstance(val, list) or val}
        if has_nul(metadata):
            raise FormatError(
                name,
                None,
                f"{position} (id {external_id}): a field contains a NUL character (U+0000), which cannot be stored",
            )
        records.append(AnswerRecord(external_id, title, body, metadata, file=name))
    if not records:
        raise FormatError(name, None, "no documents found")
    return records


def parse_rnr_ground_truth(
    path: Path | str, *, grade_map: GradeMap
) -> tuple[list[QuestionRecord], list[JudgmentRecord]]:
    path = Path(path)
    name = path.name
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    questions: list[QuestionRecord] = []
    judgments: list[JudgmentRecord] = []
    first_line: dict[str, int] = {}
    try:
        for row in reader:
            line = reader.line_num
            if not row or all(not cell.strip() for cell in row):
                continue
            text, cells = row[0].strip(), row[1:]
            if not text:
                raise FormatError(name, line, "question text is empty")
            checked_text(text, file=name, line=line, what="question text", limit=MAX_QUESTION_CHARS)
            if not cells or len(cells) % 2:
                raise FormatError(name, line, "expected the question then answer_id,grade pairs")
            qid = question_id_from_text(text)
            if qid in first_line:
                raise FormatError(name, line, f"duplicate question (also on line {first_line[qid]})")
            first_line[qid] = line
            questions.append(QuestionRecord(qid, text, None, file=name, line=line))
            row_answers: set[str] = set()
            for i in range(0, len(cells), 2):
                answer_id = clean_id(cells[i], file=name, line=line, what=f"answer id in field {i + 2}")
                if answer_id in row_answers:
                    raise FormatError(name, line, f"answer id {answer_id} appears twice for this question")
                row_answers.add(answer_id)
                stars = apply_grade(grade_map, cells[i + 1].strip(), file=name, line=line)
                judgments.append(JudgmentRecord(qid, answer_id, stars, file=name, line=line))
    except csv.Error as exc:
        raise FormatError(name, reader.line_num, f"malformed CSV: {exc}") from None
    if not questions:
        raise FormatError(name, None, "no questions found")
    return questions, judgments


def write_rnr_csv(rows: Iterable[LabelRow], out: io.TextIOBase | Any) -> None:
    """One row per question: the question text, then answer_id,stars pairs (stars 0–3)."""
    writer = csv.writer(out, quoting=csv.QUOTE_ALL, lineterminator="\n")
    current: str | None = None
    record: list[str] = []
    for row in rows:
        if row.question_id != current:
            if record:
                writer.writerow(record)
            current, record = row.question_id, [row.question_text]
        record += [row.answer_id, str(row.stars)]
    if record:
        writer.writerow(record)
