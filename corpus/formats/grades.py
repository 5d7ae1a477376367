"""A file's grades to stars 0–3: the mapping a ``--grade-map`` names, and applying it to one grade."""

from __future__ import annotations

from collections.abc import Callable

from corpus.formats.common import MAX_STARS, FormatError

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


def apply_grade(grade_map: GradeMap, raw: str, *, file: str, line: int | None) -> int:
    try:
        grade = int(raw)
    except ValueError:
        raise FormatError(file, line, f"grade {raw!r} is not a whole number") from None
    stars = grade_map(grade)
    if stars is None:
        raise FormatError(file, line, f"grade {grade} is out of range for the grade map")
    return stars
