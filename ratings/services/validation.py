"""What a rating's stars and note may be: the checks every entry point runs before writing."""

from __future__ import annotations

from django.core.exceptions import ValidationError

from ratings.models import NOTE_MAX_LENGTH


def validate_stars(value: object) -> int:
    """Stars as an int 0–3, or a ValidationError naming the field."""
    if isinstance(value, bool):
        raise ValidationError({"stars": "Stars must be a whole number from 0 to 3."})
    try:
        stars = int(str(value).strip()) if not isinstance(value, int) else value
    except (TypeError, ValueError):
        raise ValidationError(
            {"stars": f"Stars must be a whole number from 0 to 3, not {value!r}."}
        ) from None
    if not 0 <= stars <= 3:
        raise ValidationError({"stars": f"Stars must be from 0 to 3, not {stars}."})
    return stars


def validate_note(value: object) -> str:
    """A note as stored: text, stripped, at most ``NOTE_MAX_LENGTH`` characters, no NUL (ValidationError
    naming the field ``note`` otherwise)."""
    if not isinstance(value, str):
        raise ValidationError({"note": "The note must be text."})
    note = value.strip()
    if len(note) > NOTE_MAX_LENGTH:
        raise ValidationError(
            {"note": f"The note can be at most {NOTE_MAX_LENGTH} characters, not {len(note)}."}
        )
    if "\x00" in note:
        raise ValidationError({"note": "The note contains a NUL character (U+0000), which cannot be stored."})
    return note
