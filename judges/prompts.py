"""What a judge is asked and how its reply is read: the prompt (one pair per call, never the ranker's
rank or score) and the reply parsers for the three formats."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from judges.models import PLACEHOLDERS, ReplyFormat

# The rating help's scale, as raters see it on the rating page.
SCALE = """3 perfect: answers the question fully and directly.
2 good: answers it, but only partly or less precisely.
1 right topic: about the subject, but doesn't answer the question.
0 incorrect: wrong or unrelated."""

# The rating help's worked example, used when no human-rated examples are asked for.
HELP_EXAMPLES = """Examples for the question "At what temperature does water boil at sea level?":
3: "At sea level water boils at 100 °C (212 °F)."
2: "Water boils at around 100 degrees, lower up a mountain."
1: "Boiling starts when vapour pressure equals the air pressure."
0: "Water freezes at 0 °C."
"""

REPLY_INSTRUCTIONS = {
    ReplyFormat.DIGIT: "Reply with the grade only: one digit, 0, 1, 2 or 3.",
    ReplyFormat.JSON: 'Reply with JSON only: {"reasoning": "<one or two sentences>", "grade": <0-3>}.',
    ReplyFormat.REASONING: "Explain your reasoning briefly, then end with a last line 'Grade: N' (N is 0-3).",
}
ANSWER_CHARACTERS = 4000  # an answer is cut here in the prompt (tokens cost money)


class ReplyUnparsable(ValueError):
    """The judge's reply does not say a grade in the expected format."""


class GradeOutOfRange(ValueError):
    """The judge's reply says a grade outside 0–3."""


def template_errors(template: str) -> list[str]:
    """What is wrong with a prompt template: each missing placeholder, named."""
    return [f"The prompt template must contain {p}." for p in PLACEHOLDERS if p not in template]


@dataclass(frozen=True)
class Example:
    question: str
    answer: str
    stars: int


def examples_text(examples: list[Example]) -> str:
    if not examples:
        return HELP_EXAMPLES + "\n"
    lines = ["Examples graded by people on this collection:"]
    for e in examples:
        lines.append(f'Question: "{e.question}" Answer: "{_cut(e.answer, 500)}" Grade: {e.stars}')
    return "\n".join(lines) + "\n\n"


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def prompt(
    *, template: str, reply_format: str, question: str, answer: str, examples: list[Example] | None = None
) -> str:
    """The user message for one pair. Placeholders are replaced literally (a template may contain JSON
    braces), the scale and examples first so a question or answer can't inject a placeholder."""
    text = template.replace("{scale}", SCALE)
    text = text.replace("{examples}", examples_text(examples or []))
    text = text.replace("{reply_instructions}", REPLY_INSTRUCTIONS[ReplyFormat(reply_format)])
    marker_q, marker_a = "\x00question\x00", "\x00answer\x00"
    text = text.replace("{question}", marker_q).replace("{answer}", marker_a)
    return text.replace(marker_q, question).replace(marker_a, _cut(answer, ANSWER_CHARACTERS))


def _grade(value: object, reply: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ReplyUnparsable(f"the reply's grade is not a whole number: {_cut(reply, 200)!r}")
    try:
        grade = int(str(value).strip())
    except ValueError:
        raise ReplyUnparsable(f"the reply's grade is not a whole number: {_cut(reply, 200)!r}") from None
    if not 0 <= grade <= 3:
        raise GradeOutOfRange(f"the judge answered grade {grade}, outside 0–3")
    return grade


_DIGIT = re.compile(r"\s*(?:grade\s*[:=]?\s*)?(-?\d+)\s*\.?\s*", re.IGNORECASE)
_FINAL = re.compile(r"(?:final\s+)?(?:grade|score|rating)\s*[:=]\s*\**\s*(-?\d+)", re.IGNORECASE)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def parse_reply(reply: str, reply_format: str) -> tuple[int, str]:
    """(grade, reasoning) from the judge's reply, or ReplyUnparsable / GradeOutOfRange saying why."""
    text = (reply or "").strip()
    if reply_format == ReplyFormat.DIGIT:
        match = _DIGIT.fullmatch(text)
        if match is None:
            raise ReplyUnparsable(f"expected one digit 0–3, got {_cut(text, 200)!r}")
        return _grade(match.group(1), text), ""
    if reply_format == ReplyFormat.JSON:
        fenced = _FENCE.match(text)
        try:
            payload = json.loads(fenced.group(1) if fenced else text)
        except json.JSONDecodeError:
            raise ReplyUnparsable(f'expected JSON {{"grade": 0-3}}, got {_cut(text, 200)!r}') from None
        if not isinstance(payload, dict) or "grade" not in payload:
            raise ReplyUnparsable(f'expected a JSON object with "grade", got {_cut(text, 200)!r}')
        reasoning = payload.get("reasoning", "")
        return _grade(payload["grade"], text), reasoning if isinstance(reasoning, str) else str(reasoning)
    if reply_format == ReplyFormat.REASONING:
        matches = list(_FINAL.finditer(text))
        if not matches:
            raise ReplyUnparsable(f"expected a last line 'Grade: N', got {_cut(text, 200)!r}")
        last = matches[-1]
        return _grade(last.group(1), text), text[: last.start()].strip()
    raise ValueError(f"unknown reply format {reply_format!r}")
