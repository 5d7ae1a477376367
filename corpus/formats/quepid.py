"""Quepid ratings CSV (``query,docid,rating``), as Quepid exports a case's ratings ("Basic" format) and a
snapshot's ratings (the same columns, one row per document of the snapshot, the rating empty when the
document is unrated). A row with only the query is a query without ratings."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from corpus.formats.common import (
    MAX_QUESTION_CHARS,
    FormatError,
    checked_text,
    clean_id,
    question_id_from_text,
    read_text,
)
from corpus.formats.grades import GradeMap
from corpus.formats.records import JudgmentRecord, QuestionRecord

QUEPID_HEADER = ["query", "docid", "rating"]
QUEPID_SNAPSHOT_HEADER = ["snapshot name", "snapshot time", "case id", "query text", "doc id", "doc position"]


def _quepid_grade(grade_map: GradeMap, raw: str, *, file: str, line: int) -> int:
    """Quepid stores ratings as numbers and may write ``3.0``: a whole number either way, then the map."""
    text = raw.strip()
    try:
        value = float(text)
    except ValueError:
        raise FormatError(file, line, f'field "rating": {raw!r} is not a number') from None
    if not value.is_integer():
        raise FormatError(file, line, f'field "rating": {raw!r} is not a whole number; give a --grade-map')
    stars = grade_map(int(value))
    if stars is None:
        raise FormatError(file, line, f'field "rating": {int(value)} is out of range for the grade map')
    return stars


def _quepid_unescaped(text: str) -> str:
    """Quepid guards a query starting with = + - @ against spreadsheet formulas with a leading space
    (older versions, stripped already) or apostrophe (newer): take the apostrophe off again."""
    if len(text) > 1 and text[0] == "'" and text[1] in "=+-@":
        return text[1:]
    return text


def parse_quepid_ratings(
    path: Path | str, *, grade_map: GradeMap
) -> tuple[list[QuestionRecord], list[JudgmentRecord]]:
    """Read a Quepid ratings CSV (a case's or a snapshot's ratings): header ``query,docid,rating``.

    Quepid queries have no id: as for R&R ground truth, the id comes from the normalised query text. A
    row with only the query, or an empty rating (a snapshot's unrated document), adds the query without
    a judgment. The same query and document twice is accepted when the ratings agree.
    """
    path = Path(path)
    name = path.name
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    questions: dict[str, QuestionRecord] = {}
    judgments: dict[tuple[str, str], JudgmentRecord] = {}
    header_seen = False
    try:
        for row in reader:
            line = reader.line_num
            if not row or all(not cell.strip() for cell in row):
                continue
            if not header_seen:
                header = [cell.strip().lower() for cell in row]
                if header[: len(QUEPID_SNAPSHOT_HEADER)] == QUEPID_SNAPSHOT_HEADER:
                    raise FormatError(
                        name,
                        line,
                        "this is a Quepid snapshot of ranked documents (Snapshot Name, ..., Doc Position), "
                        "which holds no ratings; export the snapshot's ratings from Quepid instead "
                        "(columns query,docid,rating)",
                    )
                if header != QUEPID_HEADER:
                    raise FormatError(
                        name, line, f"expected the header query,docid,rating, found {','.join(row)!r}"
                    )
                header_seen = True
                continue
            if len(row) not in (1, 3):
                raise FormatError(name, line, f"expected 3 fields query,docid,rating, found {len(row)}")
            text = _quepid_unescaped(row[0].strip())
            if not text:
                raise FormatError(name, line, 'field "query" is empty')
            checked_text(text, file=name, line=line, what='field "query"', limit=MAX_QUESTION_CHARS)
            qid = question_id_from_text(text)
            questions.setdefault(qid, QuestionRecord(qid, text, None, file=name, line=line))
            if len(row) == 1 or not row[2].strip():
                if len(row) == 3 and row[1].strip():
                    clean_id(row[1], file=name, line=line, what='field "docid"')
                continue
            answer_id = clean_id(row[1], file=name, line=line, what='field "docid"')
            stars = _quepid_grade(grade_map, row[2], file=name, line=line)
            earlier = judgments.get((qid, answer_id))
            if earlier is not None:
                if earlier.stars != stars:
                    raise FormatError(
                        name,
                        line,
                        f"query {text!r} and docid {answer_id} were rated differently on line {earlier.line}",
                    )
                continue
            judgments[(qid, answer_id)] = JudgmentRecord(qid, answer_id, stars, file=name, line=line)
    except csv.Error as exc:
        raise FormatError(name, reader.line_num, f"malformed CSV: {exc}") from None
    if not header_seen:
        raise FormatError(name, None, "empty file (expected the header query,docid,rating)")
    if not questions:
        raise FormatError(name, None, "no queries found")
    return list(questions.values()), list(judgments.values())
