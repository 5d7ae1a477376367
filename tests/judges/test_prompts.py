import pytest

from judges.models import DEFAULT_PROMPT
from judges.prompts import (
    GradeOutOfRange,
    ReplyUnparsable,
    parse_reply,
    prompt,
    template_errors,
)


@pytest.mark.parametrize(
    ("reply", "fmt", "grade", "reasoning"),
    [
        ("2", "digit", 2, ""),
        (" 3.\n", "digit", 3, ""),
        ("Grade: 1", "digit", 1, ""),
        ('{"reasoning": "on topic", "grade": 1}', "json", 1, "on topic"),
        ('```json\n{"grade": "3"}\n```', "json", 3, ""),
        (
            "It names the cause.\nIt misses the figure.\nGrade: 2",
            "reasoning",
            2,
            "It names the cause.\nIt misses the figure.",
        ),
        ("Score 1 first... Final grade: 0", "reasoning", 0, "Score 1 first..."),
    ],
)
def test_parse_reply_reads_each_format(reply, fmt, grade, reasoning):
    assert parse_reply(reply, fmt) == (grade, reasoning)


@pytest.mark.parametrize(
    ("reply", "fmt", "error", "message"),
    [
        ("I think it is good", "digit", ReplyUnparsable, "expected one digit 0–3"),
        ("7", "digit", GradeOutOfRange, "grade 7, outside 0–3"),
        ("-1", "digit", GradeOutOfRange, "grade -1"),
        ("not json", "json", ReplyUnparsable, "expected JSON"),
        ('{"score": 2}', "json", ReplyUnparsable, 'with "grade"'),
        ('{"grade": true}', "json", ReplyUnparsable, "not a whole number"),
        ('{"grade": 4}', "json", GradeOutOfRange, "grade 4"),
        ("It is relevant.", "reasoning", ReplyUnparsable, "Grade: N"),
    ],
)
def test_parse_reply_bad_reply_says_why(reply, fmt, error, message):
    with pytest.raises(error, match=message):
        parse_reply(reply, fmt)


def test_template_errors_name_missing_placeholders():
    assert template_errors("Grade this: {answer}") == ["The prompt template must contain {question}."]
    assert template_errors(DEFAULT_PROMPT) == []


def test_prompt_has_scale_pair_and_no_rank_or_score():
    text = prompt(template=DEFAULT_PROMPT, reply_format="digit", question="Why {answer}?", answer="Because.")

    assert "3 perfect" in text and "0 incorrect" in text
    assert "Question: Why {answer}?" in text  # a placeholder inside the question is left alone
    assert "Answer: Because." in text
    assert "one digit" in text
    assert "rank" not in text.lower() and "score" not in text.lower()
