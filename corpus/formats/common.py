"""What every format shares: the error naming where a file is wrong, the limits on one record, reading
UTF-8 text, checking text and ids, and the id of a question known only by its text."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
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


def has_nul(value: Any) -> bool:
    """Whether a JSON value holds a NUL character anywhere (keys included)."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list):
        return any(has_nul(v) for v in value)
    return False


def clean_id(raw: Any, *, file: str, line: int | None, what: str) -> str:
    """An id from a file: a string or a whole number, stripped, not empty, at most 200 characters."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int)):
        raise FormatError(file, line, f"{what} must be a string or a whole number, not {type(raw).__name__}")
    value = checked_text(str(raw), file=file, line=line, what=what, limit=10_000).strip()
    if not value:
        raise FormatError(file, line, f"{what} is empty")
    if len(value) > 200:
        raise FormatError(file, line, f"{what} is longer than 200 characters")
    return value


def nonblank_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(line number, line) of each line of the file that is not blank."""
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if line.strip():
            yield number, line
