"""Rated Ranking Evaluator (RRE) ratings JSON: ``{"query_groups": [...]}`` or ``{"topics": [{"query_groups":
[...]}]}`` (or Quepid's RRE export, ``{"queries": [...]}``); each group's ``queries[].placeholders`` hold
the query text under ``query_placeholder`` (default ``$query``) and its ``relevant_documents`` are either
``{"doc id": {"gain": 3}}`` or ``{"3": ["doc id", ...]}``."""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Iterator
from pathlib import Path
from typing import Any

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
                doc = clean_id(key, file=name, line=docs_line, what=f'field "{field_path}" (document id)')
                graded.append((doc, stars, _line_of(value, docs_line), field_path))
            elif isinstance(value, list):  # {"3": ["doc id", ...]}
                list_line = _line_of(value, docs_line)
                stars = _rre_gain(grade_map, key, file=name, line=list_line, where=field_path)
                for i, raw in enumerate(value):
                    doc = clean_id(raw, file=name, line=list_line, what=f'field "{field_path}[{i}]"')
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
