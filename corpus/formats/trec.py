"""TREC: corpus JSONL (``id``, ``title``, ``text``), topics TSV (``qid<TAB>text[<TAB>train|test]``) and
qrels (``qid 0 docid grade``) read; qrels written."""

from __future__ import annotations

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
    nonblank_lines,
)
from corpus.formats.grades import GradeMap, apply_grade
from corpus.formats.records import AnswerRecord, JudgmentRecord, LabelRow, QuestionRecord


def parse_trec_corpus(path: Path | str) -> list[AnswerRecord]:
    path = Path(path)
    name = path.name
    records: list[AnswerRecord] = []
    seen: dict[str, int] = {}
    for line, raw in nonblank_lines(path):
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise FormatError(name, line, f"invalid JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise FormatError(name, line, "expected a JSON object per line")
        if "id" not in obj and "_id" not in obj:
            raise FormatError(name, line, 'field "id" is missing')
        external_id = clean_id(obj.pop("id", obj.pop("_id", None)), file=name, line=line, what='field "id"')
        if external_id in seen:
            raise FormatError(name, line, f"duplicate id {external_id!r} (also on line {seen[external_id]})")
        seen[external_id] = line
        title, body = obj.pop("title", ""), obj.pop("text", obj.pop("body", ""))
        if not isinstance(title, str) or not isinstance(body, str):
            raise FormatError(name, line, 'fields "title" and "text" must be text')
        checked_text(title, file=name, line=line, what='field "title"', limit=MAX_TITLE_CHARS)
        checked_text(body, file=name, line=line, what='field "text"', limit=MAX_BODY_CHARS)
        if has_nul(obj):
            raise FormatError(
                name, line, "a metadata field contains a NUL character (U+0000), which cannot be stored"
            )
        records.append(AnswerRecord(external_id, title, body, obj, file=name, line=line))
    if not records:
        raise FormatError(name, None, "no documents found")
    return records


def parse_trec_topics(path: Path | str) -> list[QuestionRecord]:
    path = Path(path)
    name = path.name
    records: list[QuestionRecord] = []
    seen: dict[str, int] = {}
    for line, raw in nonblank_lines(path):
        cells = raw.split("\t")
        if len(cells) not in (2, 3):
            raise FormatError(name, line, "expected qid<TAB>text or qid<TAB>text<TAB>train|test")
        qid = clean_id(cells[0], file=name, line=line, what="question id")
        text = cells[1].strip()
        if not text:
            raise FormatError(name, line, "question text is empty")
        checked_text(text, file=name, line=line, what="question text", limit=MAX_QUESTION_CHARS)
        split = cells[2].strip().lower() if len(cells) == 3 else None
        if split is not None and split not in {"train", "test"}:
            raise FormatError(name, line, f"split {cells[2]!r} must be train or test")
        if qid in seen:
            raise FormatError(name, line, f"duplicate question id {qid!r} (also on line {seen[qid]})")
        seen[qid] = line
        records.append(QuestionRecord(qid, text, split, file=name, line=line))
    if not records:
        raise FormatError(name, None, "no topics found")
    return records


def parse_trec_qrels(path: Path | str, *, grade_map: GradeMap) -> list[JudgmentRecord]:
    path = Path(path)
    name = path.name
    records: list[JudgmentRecord] = []
    seen: dict[tuple[str, str], int] = {}
    for line, raw in nonblank_lines(path):
        cells = raw.split()
        if len(cells) != 4:
            raise FormatError(name, line, f"expected 4 columns 'qid 0 docid grade', found {len(cells)}")
        qid, _, docid, grade = cells
        stars = apply_grade(grade_map, grade, file=name, line=line)
        key = (qid, docid)
        if key in seen:
            raise FormatError(name, line, f"duplicate judgment for {qid} {docid} (also on line {seen[key]})")
        seen[key] = line
        records.append(JudgmentRecord(qid, docid, stars, file=name, line=line))
    if not records:
        raise FormatError(name, None, "no judgments found")
    return records


def write_trec_qrels(rows: Iterable[LabelRow], out: io.TextIOBase | Any) -> None:
    for row in rows:
        out.write(f"{row.question_id} 0 {row.answer_id} {row.stars}\n")
