"""Forms of the rating pages. Stars are validated by the same rule as the service (0–3, whole numbers)."""

from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from ratings.models import STAR_WORDS
from ratings.services import SKIP_REASON_MAX_LENGTH, validate_stars

STAR_CHOICES = [(value, f"{value} {word}") for value, word in STAR_WORDS.items()]


class StarsField(forms.Field):
    default_error_messages = {"required": "Choose a rating from 0 (incorrect) to 3 (perfect)."}

    def to_python(self, value: object) -> int | None:
        if value in self.empty_values:
            return None
        try:
            return validate_stars(value)
        except ValidationError as error:
            raise forms.ValidationError(error.message_dict["stars"]) from None


class RatingForm(forms.Form):
    stars = StarsField()


class SkipForm(forms.Form):
    reason = forms.CharField(
        required=False,
        max_length=SKIP_REASON_MAX_LENGTH,
        strip=True,
        label="Why can't you judge it? (optional)",
        error_messages={"max_length": f"The reason can be at most {SKIP_REASON_MAX_LENGTH} characters."},
    )
