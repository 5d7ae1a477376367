"""Reading and writing collection files. Pure parsing: no database access.

Every error names the file, the line (where the format has lines) and the field, e.g.
``cranfield-gt.csv line 17: grade 'x' is not a whole number``.

Formats read:
- Retrieve and Rank documents: Solr bulk-add JSON, ``{"add": {"doc": {...}}, "add": {...}, ...}``. The
  key ``"add"`` repeats once per document, so it is parsed with ``object_pairs_hook`` (a plain
  ``json.load`` keeps only the last document).
- Retrieve and Rank ground truth CSV: ``"question","answer_id","grade","answer_id","grade",...``.
  Rows carry no question id; the id is derived from the normalised question text.
- TREC: corpus JSONL (``id``, ``title``, ``text``), topics TSV (``qid<TAB>text[<TAB>train|test]``),
  qrels (``qid 0 docid grade``).
- Ground-truth JSONL as written by ``export_ground_truth --format jsonl``.
- Quepid ratings CSV (``query,docid,rating``), as Quepid exports a case's ratings ("Basic" format) and a
  snapshot's ratings (the same columns, one row per document of the snapshot, the rating empty when the
  document is unrated). A row with only the query is a query without ratings.
- Rated Ranking Evaluator (RRE) ratings JSON: ``{"query_groups": [...]}`` or ``{"topics": [{"query_groups":
  [...]}]}`` (or Quepid's RRE export, ``{"queries": [...]}``); each group's ``queries[].placeholders``
  hold the query text under ``query_placeholder`` (default ``$query``) and its ``relevant_documents`` are
  either ``{"doc id": {"gain": 3}}`` or ``{"3": ["doc id", ...]}``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MAX_STARS = 3
# Limits on what one record may hold: a NUL can't be stored by PostgreSQL, and a field this long is a
# mistake (a whole file pasted into one field) that would slow every page and the index.
MAX_TITLE_CHARS = 1_000
MAX_BODY_CHARS = 100_000
MAX_QUESTION_CHARS = 10_000


class FormatError(ValueError):
    """A file that cannot be imported, with where and why."""

    def __init__(self, file: str, line: int | None, message: str) -> None:
        self.file = file
        self.line = line
        self.message = message
        where = f"{file} line {line}" if line is not None else file
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class AnswerRecord:
    external_id: str
    title: str
    body: str
    metadata: dict[str, Any] = field(default_factory=dict)
    file: str = ""
    line: int | None = None


@dataclass(frozen=True)
class QuestionRecord:
    external_id: str
    text: str
    split: str | None = None
    file: str = ""
    line: int | None = None


@dataclass(frozen=True)
class JudgmentRecord:
    question_id: str
    answer_id: str
    stars: int
    file: str = ""
    line: int | None = None


# --- grade → stars --------------------------------------------------------------------------------

GradeMap = Callable[[int], int | None]


def grade_map_from_spec(spec: str) -> GradeMap:
    """Build the grade→stars mapping named by ``spec``; the mapping returns None for a grade out of range.

    - ``rnr``: Cranfield's R&R grades 0–4, stars = max(grade − 1, 0) (4→3, 3→2, 2→1, 1 and 0→0).
    - ``identity``: stars = grade for 0–3; negative grades (TREC's "not relevant"/"junk") become 0.
    - explicit pairs ``"4:3,3:2,2:1,1:0,0:0"``: only the listed grades are accepted.
    """
    if spec == "rnr":
        return lambda grade: max(grade - 1, 0) if 0 <= grade <= 4 else None
    if spec == "identity":
        return lambda grade: max(grade, 0) if grade <= MAX_STARS else None
    table: dict[int, int] = {}
    for item in spec.split(","):
        grade, sep, stars = item.partition(":")
        try:
            g, s = int(grade), int(stars)
        except ValueError:
            raise ValueError(f"grade map {spec!r}: {item!r} is not GRADE:STARS") from None
        if not sep or not 0 <= s <= MAX_STARS:
            raise ValueError(f"grade map {spec!r}: stars in {item!r} must be 0–3")
        table[g] = s
    return table.get


def _apply_grade(grade_map: GradeMap, raw: str, *, file: str, line: int | None) -> int:
    try:
        grade = int(raw)
    except ValueError:
        raise FormatError(file, line, f"grade {raw!r} is not a whole number") from None
    stars = grade_map(grade)
    if stars is None:
        raise FormatError(file, line, f"grade {grade} is out of range for the grade map")
    return stars


# --- helpers -------------------------------------------------------------------------------------


def read_text(path: Path | str) -> str:
    """The file's text as UTF-8 (a BOM is allowed); anything else is an error naming the line."""
    path = Path(path)
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FormatError(path.name, line, f"not UTF-8 text (byte 0x{data[exc.start]:02x})") from None


_SPACE = re.compile(r"\s+")


def normalise_question_text(text: str) -> str:
    """Lower-case, single spaces, no trailing full stop: so cosmetic edits keep the same question id."""
    text = _SPACE.sub(" ", text).strip().lower()
    return text.rstrip(" .?!").strip()


def question_id_from_text(text: str) -> str:
    """A stable external id for a question known only by its text (R&R ground truth rows)."""
    return "q-" + hashlib.sha256(normalise_question_text(text).encode()).hexdigest()[:12]


def checked_text(value: str, *, file: str, line: int | None, what: str, limit: int) -> str:
    """``value`` unless it holds a NUL character or is longer than ``limit`` (FormatError naming ``what``)."""
    if "\x00" in value:
        raise FormatError(file, line, f"{what} contains a NUL character (U+0000), which cannot be stored")
    if len(value) > limit:
        raise FormatError(file, line, f"{what} is {len(value):,} characters long; the limit is {limit:,}")
    return value


def _has_nul(value: Any) -> bool:
    """Whether a JSON value holds a NUL character anywhere (keys included)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(_has_nul(k) or _has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_nul(v) for v in value)
    return False


def _clean_id(raw: Any, *, file: str, line: int | None, what: str) -> str:
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise FormatError(file, line, f"{what} must be a string or a whole number, not {type(raw).__name__}")
    value = checked_text(str(raw), file=file, line=line, what=what, limit=10_000).strip()
    if not value:
        raise FormatError(file, line, f"{what} is empty")
    if len(value) > 200:
        raise FormatError(file, line, f"{what} is longer than 200 characters")
    return value


# --- Retrieve and Rank ---------------------------------------------------------------------------


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
        external_id = _clean_id(fields.pop("id"), file=name, line=None, what=f'{position}: field "id"')
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
        if _has_nul(metadata):
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
                answer_id = _clean_id(cells[i], file=name, line=line, what=f"answer id in field {i + 2}")
                if answer_id in row_answers:
                    raise FormatError(name, line, f"answer id {answer_id} appears twice for this question")
                row_answers.add(answer_id)
                stars = _apply_grade(grade_map, cells[i + 1].strip(), file=name, line=line)
                judgments.append(JudgmentRecord(qid, answer_id, stars, file=name, line=line))
    except csv.Error as exc:
        raise FormatError(name, reader.line_num, f"malformed CSV: {exc}") from None
    if not questions:
        raise FormatError(name, None, "no questions found")
    return questions, judgments


# --- TREC ----------------------------------------------------------------------------------------


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if line.strip():
            yield number, line


def parse_trec_corpus(path: Path | str) -> list[AnswerRecord]:
    path = Path(path)
    name = path.name
    records: list[AnswerRecord] = []
    seen: dict[str, int] = {}
    for line, raw in _lines(path):
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise FormatError(name, line, f"invalid JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise FormatError(name, line, "expected a JSON object per line")
        if "id" not in obj and "_id" not in obj:
            raise FormatError(name, line, 'field "id" is missing')
        external_id = _clean_id(obj.pop("id", obj.pop("_id", None)), file=name, line=line, what='field "id"')
        if external_id in seen:
            raise FormatError(name, line, f"duplicate id {external_id!r} (also on line {seen[external_id]})")
        seen[external_id] = line
        title, body = obj.pop("title", ""), obj.pop("text", obj.pop("body", ""))
        if not isinstance(title, str) or not isinstance(body, str):
            raise FormatError(name, line, 'fields "title" and "text" must be text')
        checked_text(title, file=name, line=line, what='field "title"', limit=MAX_TITLE_CHARS)
        checked_text(body, file=name, line=line, what='field "text"', limit=MAX_BODY_CHARS)
        if _has_nul(obj):
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
    for line, raw in _lines(path):
        cells = raw.split("\t")
        if len(cells) not in (2, 3):
            raise FormatError(name, line, "expected qid<TAB>text or qid<TAB>text<TAB>train|test")
        qid = _clean_id(cells[0], file=name, line=line, what="question id")
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
    for line, raw in _lines(path):
        cells = raw.split()
        if len(cells) != 4:
            raise FormatError(name, line, f"expected 4 columns 'qid 0 docid grade', found {len(cells)}")
        qid, _, docid, grade = cells
        stars = _apply_grade(grade_map, grade, file=name, line=line)
        key = (qid, docid)
        if key in seen:
            raise FormatError(name, line, f"duplicate judgment for {qid} {docid} (also on line {seen[key]})")
        seen[key] = line
        records.append(JudgmentRecord(qid, docid, stars, file=name, line=line))
    if not records:
        raise FormatError(name, None, "no judgments found")
    return records


def parse_ground_truth_jsonl(path: Path | str) -> tuple[list[QuestionRecord], list[JudgmentRecord]]:
    """Read ``export_ground_truth --format jsonl`` output back (stars are taken as they are)."""
    path = Path(path)
    name = path.name
    questions: dict[str, QuestionRecord] = {}
    judgments: list[JudgmentRecord] = []
    for line, raw in _lines(path):
        try:
            obj = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise FormatError(name, line, f"invalid JSON: {exc.msg}") from None
        if not isinstance(obj, dict):
            raise FormatError(name, line, "expected a JSON object per line")
        for key in ("question_id", "answer_id", "stars"):
            if key not in obj:
                raise FormatError(name, line, f'field "{key}" is missing')
        qid = _clean_id(obj["question_id"], file=name, line=line, what='field "question_id"')
        aid = _clean_id(obj["answer_id"], file=name, line=line, what='field "answer_id"')
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


# --- Quepid --------------------------------------------------------------------------------------

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
                    _clean_id(row[1], file=name, line=line, what='field "docid"')
                continue
            answer_id = _clean_id(row[1], file=name, line=line, what='field "docid"')
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


# --- Rated Ranking Evaluator -----------------------------------------------------------------------


class _Located(dict):
    """A JSON object that knows the line it starts on (``_json_with_lines``)."""

    line: int = 0


class _LocatedList(list):
    """A JSON array that knows the line it starts on (``_json_with_lines``)."""

    line: int = 0


def _json_with_lines(text: str, *, file: str) -> Any:
    """``json.loads`` whose objects and arrays know their line, so errors deep in a file can name it.

    The pure-Python scanner calls ``parse_object`` and ``parse_array`` with the offset of each object or
    array; its line is the number of newlines before that offset plus one (found by bisection over the
    newline offsets).
    """
    newlines = [i for i, char in enumerate(text) if char == "\n"]
    decoder = json.JSONDecoder()

    def parse_object(s_and_end, strict, scan_once, object_hook, object_pairs_hook, memo=None):
        start = s_and_end[1]
        values, end = json.decoder.JSONObject(s_and_end, strict, scan_once, None, None, memo)
        located = _Located(values)
        located.line = bisect_right(newlines, start - 1) + 1
        return located, end

    def parse_array(s_and_end, scan_once):
        start = s_and_end[1]
        values, end = json.decoder.JSONArray(s_and_end, scan_once)
        located = _LocatedList(values)
        located.line = bisect_right(newlines, start - 1) + 1
        return located, end

    decoder.parse_object = parse_object  # type: ignore[attr-defined]
    decoder.parse_array = parse_array  # type: ignore[attr-defined]
    decoder.scan_once = json.scanner.py_make_scanner(decoder)  # type: ignore[attr-defined]
    try:
        return decoder.decode(text)
    except json.JSONDecodeError as exc:
        raise FormatError(file, exc.lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise FormatError(file, None, "invalid JSON: nested too deeply") from None


def _line_of(value: Any, default: int | None) -> int | None:
    return value.line if isinstance(value, (_Located, _LocatedList)) else default


def _rre_groups(top: Any, *, file: str) -> Iterator[tuple[str, Any]]:
    """Each query group of an RRE ratings file with its JSON path, whichever of the three layouts."""
    if not isinstance(top, dict):
        raise FormatError(file, 1, "expected a JSON object with query_groups, topics or queries")
    if "topics" in top:
        topics = top["topics"]
        if not isinstance(topics, list):
            raise FormatError(file, _line_of(top, 1), 'field "topics" must be a list')
        for t, topic in enumerate(topics):
            groups = topic.get("query_groups") if isinstance(topic, dict) else None
            if not isinstance(groups, list):
                raise FormatError(
                    file, _line_of(topic, None), f'field "topics[{t}].query_groups" must be a list'
                )
            for g, group in enumerate(groups):
                yield f"topics[{t}].query_groups[{g}]", group
    elif "query_groups" in top:
        groups = top["query_groups"]
        if not isinstance(groups, list):
            raise FormatError(file, _line_of(top, 1), 'field "query_groups" must be a list')
        for g, group in enumerate(groups):
            yield f"query_groups[{g}]", group
    elif "queries" in top:
        # Quepid's RRE export: every query carries its own relevant_documents.
        queries = top["queries"]
        if not isinstance(queries, list):
            raise FormatError(file, _line_of(top, 1), 'field "queries" must be a list')
        for q, query in enumerate(queries):
            if not isinstance(query, dict):
                raise FormatError(file, _line_of(top, 1), f'field "queries[{q}]" must be an object')
            group = _Located(queries=[query], relevant_documents=query.get("relevant_documents", {}))
            group.line = _line_of(query, 0) or 0
            yield f"queries[{q}]", group
    else:
        raise FormatError(file, 1, 'expected a field "query_groups", "topics" or "queries"')


def _rre_gain(grade_map: GradeMap, raw: Any, *, file: str, line: int | None, where: str) -> int:
    if isinstance(raw, bool) or not isinstance(raw, (int, str)):
        raise FormatError(file, line, f'field "{where}": gain {raw!r} is not a whole number')
    try:
        grade = int(str(raw).strip())
    except ValueError:
        raise FormatError(file, line, f'field "{where}": gain {raw!r} is not a whole number') from None
    stars = grade_map(grade)
    if stars is None:
        raise FormatError(file, line, f'field "{where}": gain {grade} is out of range for the grade map')
    return stars


def parse_rre_ratings(
    path: Path | str, *, grade_map: GradeMap
) -> tuple[list[QuestionRecord], list[JudgmentRecord]]:
    """Read a Rated Ranking Evaluator ratings file (see the module docstring for its layouts).

    Every query of a group is a question (id from its normalised text, so "fender" and "Fender" are
    one) judged with the group's relevant documents; errors name the line of the object at fault and
    the field's JSON path (``query_groups[2].relevant_documents.3``).
    """
    path = Path(path)
    name = path.name
    top = _json_with_lines(read_text(path), file=name)
    placeholder = top.get("query_placeholder", "$query") if isinstance(top, dict) else "$query"
    questions: dict[str, QuestionRecord] = {}
    judgments: dict[tuple[str, str], tuple[JudgmentRecord, str]] = {}
    for where, group in _rre_groups(top, file=name):
        group_line = _line_of(group, None)
        if not isinstance(group, dict):
            raise FormatError(name, None, f'field "{where}" must be an object')
        queries = group.get("queries")
        if not isinstance(queries, list) or not queries:
            raise FormatError(name, group_line, f'field "{where}.queries" must be a non-empty list')
        texts: list[tuple[str, int | None]] = []
        for q, query in enumerate(queries):
            query_where = f"{where}.queries[{q}]" if not where.startswith("queries[") else where
            values = query.get("placeholders") if isinstance(query, dict) else None
            text = values.get(placeholder) if isinstance(values, dict) else None
            line = _line_of(values, _line_of(query, group_line))
            if not isinstance(text, str) or not text.strip():
                raise FormatError(
                    name, line, f'field "{query_where}.placeholders.{placeholder}" is missing or empty'
                )
            text = text.strip()
            checked_text(
                text,
                file=name,
                line=line,
                what=f'field "{query_where}.placeholders.{placeholder}"',
                limit=MAX_QUESTION_CHARS,
            )
            texts.append((text, line))
        documents = group.get("relevant_documents", {})
        docs_line = _line_of(documents, group_line)
        if not isinstance(documents, dict):
            raise FormatError(name, group_line, f'field "{where}.relevant_documents" must be an object')
        graded: list[tuple[str, int, int | None, str]] = []
        for key, value in documents.items():
            field_path = f"{where}.relevant_documents.{key}"
            if isinstance(value, dict):  # {"doc id": {"gain": 3}}
                if "gain" not in value:
                    raise FormatError(
                        name, _line_of(value, docs_line), f'field "{field_path}.gain" is missing'
                    )
                stars = _rre_gain(
                    grade_map,
                    value["gain"],
                    file=name,
                    line=_line_of(value, docs_line),
                    where=f"{field_path}.gain",
                )
                doc = _clean_id(key, file=name, line=docs_line, what=f'field "{field_path}" (document id)')
                graded.append((doc, stars, _line_of(value, docs_line), field_path))
            elif isinstance(value, list):  # {"3": ["doc id", ...]}
                list_line = _line_of(value, docs_line)
                stars = _rre_gain(grade_map, key, file=name, line=list_line, where=field_path)
                for i, raw in enumerate(value):
                    doc = _clean_id(raw, file=name, line=list_line, what=f'field "{field_path}[{i}]"')
                    graded.append((doc, stars, list_line, f"{field_path}[{i}]"))
            else:
                raise FormatError(
                    name,
                    docs_line,
                    f'field "{field_path}" must be {{"gain": N}} or a list of document ids',
                )
        for text, line in texts:
            qid = question_id_from_text(text)
            questions.setdefault(qid, QuestionRecord(qid, text, None, file=name, line=line))
            for doc, stars, doc_line, field_path in graded:
                earlier = judgments.get((qid, doc))
                if earlier is not None:
                    if earlier[0].stars != stars:
                        raise FormatError(
                            name,
                            doc_line,
                            f'field "{field_path}": document {doc} for query {text!r} is '
                            f"{earlier[0].stars} stars in {earlier[1]} but {stars} here",
                        )
                    continue
                judgments[(qid, doc)] = (
                    JudgmentRecord(qid, doc, stars, file=name, line=doc_line),
                    field_path,
                )
    if not questions:
        raise FormatError(name, None, "no queries found")
    return list(questions.values()), [j for j, _ in judgments.values()]


# --- writers -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LabelRow:
    question_id: str
    question_text: str
    split: str
    answer_id: str
    stars: int
    rater_count: int = 1
    disagreement: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The JSON shape of a label, shared by the JSONL export and the API."""
        return {
            "question_id": self.question_id,
            "question": self.question_text,
            "split": self.split,
            "answer_id": self.answer_id,
            "stars": self.stars,
            "rater_count": self.rater_count,
            "disagreement": self.disagreement,
        }


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


def write_trec_qrels(rows: Iterable[LabelRow], out: io.TextIOBase | Any) -> None:
    for row in rows:
        out.write(f"{row.question_id} 0 {row.answer_id} {row.stars}\n")


def write_ground_truth_jsonl(rows: Iterable[LabelRow], out: io.TextIOBase | Any) -> None:
    for row in rows:
        out.write(json.dumps(row.as_dict(), ensure_ascii=False) + "\n")


WRITERS = {"rnr-csv": write_rnr_csv, "trec-qrels": write_trec_qrels, "jsonl": write_ground_truth_jsonl}
