"""The request template's placeholders, ``{{question}}`` and ``{{rows}}``: finding them (an unknown one, or
one in an object key, is an error) and filling them structurally, never by pasting text into JSON or a URL."""

from __future__ import annotations

import re
from typing import Any

QUESTION = "{{question}}"
ROWS = "{{rows}}"
_PLACEHOLDER = re.compile(r"\{\{\s*([^{}]*?)\s*\}\}")


def _placeholders(value: Any, where: str, errors: dict[str, str]) -> set[str]:
    """The placeholders used in a template value; unknown ones, or any in an object key, are errors."""
    found: set[str] = set()
    if isinstance(value, str):
        for name in _PLACEHOLDER.findall(value):
            if name not in {"question", "rows"}:
                errors.setdefault(
                    where, f"{where}: unknown placeholder {{{{{name}}}}}; use {QUESTION} or {ROWS}."
                )
            found.add(name)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found |= _placeholders(item, f"{where}.{i}", errors)
    elif isinstance(value, dict):
        for key, item in value.items():
            if _PLACEHOLDER.search(str(key)):
                errors.setdefault(
                    f"{where}.{key}", f"{where}: placeholders go in values, not in the key {key!r}."
                )
            found |= _placeholders(item, f"{where}.{key}", errors)
    return found


def _fill_text(text: str, *, question: str, rows: int) -> str:
    return _PLACEHOLDER.sub(lambda m: question if m.group(1) == "question" else str(rows), text)


def fill_template(value: Any, *, question: str, rows: int) -> Any:
    """``value`` (parsed JSON) with the placeholders of its string values filled: ``"{{rows}}"`` alone
    becomes the number, any other string gets the texts put in. Keys and non-strings are kept as they are;
    the caller serialises the result, so the question is escaped by the JSON encoder, not pasted."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole is not None and whole.group(1) == "rows":
            return rows
        return _fill_text(value, question=question, rows=rows)
    if isinstance(value, list):
        return [fill_template(item, question=question, rows=rows) for item in value]
    if isinstance(value, dict):
        return {key: fill_template(item, question=question, rows=rows) for key, item in value.items()}
    return value


def fill_params(params: dict[str, Any], *, question: str, rows: int) -> list[tuple[str, str]]:
    """The query-string parameters, filled, as (name, value) pairs for the HTTP client to encode one by
    one (a list value repeats its parameter)."""
    pairs: list[tuple[str, str]] = []
    for name, value in params.items():
        for item in value if isinstance(value, list) else [value]:
            pairs.append((name, _fill_text(str(item), question=question, rows=rows)))
    return pairs
