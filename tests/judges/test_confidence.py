"""judges.confidence: how sure a judge is of a grade, on constructed cases with hand-computed values."""

from __future__ import annotations

import math

import pytest

from judges.confidence import grade_probability, json_confidence, threshold_distance


def _token(token: str, p: float, top: list[tuple[str, float]] | None = None) -> dict:
    return {
        "token": token,
        "logprob": math.log(p),
        "top_logprobs": [{"token": t, "logprob": math.log(q)} for t, q in (top or [])],
    }


def test_threshold_distance_is_the_gap_to_the_nearest_threshold():
    assert threshold_distance(0.5, (0.3, 0.55, 0.8)) == pytest.approx(0.05)
    assert threshold_distance(0.3, (0.3, 0.55, 0.8)) == 0.0
    assert threshold_distance(1.0, (0.3, 0.55, 0.8)) == pytest.approx(0.2)


def test_threshold_distance_refuses_no_thresholds():
    with pytest.raises(ValueError, match="thresholds"):
        threshold_distance(0.5, ())


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ('{"grade": 2, "confidence": 0.75}', 0.75),
        ('```json\n{"grade": 2, "confidence": 1}\n```', 1.0),
        ('{"grade": 2, "confidence": 1.5}', None),
        ('{"grade": 2, "confidence": "high"}', None),
        ('{"grade": 2, "confidence": true}', None),
        ('{"grade": 2}', None),
        ("2", None),
        ("not json", None),
    ],
)
def test_json_confidence_is_a_number_from_0_to_1_or_none(reply, expected):
    assert json_confidence(reply) == expected


def test_grade_probability_renormalises_over_the_grades_listed():
    # P(2) = 0.6, P(3) = 0.2, P(" the") = 0.1 (not a grade): 0.6 / (0.6 + 0.2) = 0.75.
    tokens = [_token("2", 0.6, [("2", 0.6), ("3", 0.2), (" the", 0.1)])]

    assert grade_probability(tokens, 2, "digit") == pytest.approx(0.75)


def test_grade_probability_counts_the_chosen_token_when_the_list_leaves_it_out():
    # 0.5 / (0.5 + 0.25 + 0.25)
    tokens = [_token("1", 0.5, [("0", 0.25), ("3", 0.25)])]

    assert grade_probability(tokens, 1, "digit") == pytest.approx(0.5)


def test_grade_probability_without_alternatives_is_the_tokens_own():
    assert grade_probability([_token("3", 0.8)], 3, "digit") == pytest.approx(0.8)


def test_grade_probability_finds_the_grade_token_of_each_format():
    reasoning = [
        _token("Answer", 0.9),
        _token(" 1", 0.3, [("1", 0.3), ("2", 0.3)]),  # a digit inside the reasoning
        _token("Grade", 1.0),
        _token(":", 1.0),
        _token(" 1", 0.9, [("1", 0.9), ("0", 0.1)]),
    ]
    json_reply = [
        _token('{"', 1.0),
        _token("reasoning", 1.0),
        _token("1", 0.3, [("1", 0.3), ("0", 0.3)]),
        _token('","', 1.0),
        _token("grade", 1.0),
        _token('":', 1.0),
        _token(" 1", 0.8, [("1", 0.8), ("2", 0.2)]),
        _token("}", 1.0),
    ]

    assert grade_probability(reasoning, 1, "reasoning") == pytest.approx(0.9)
    assert grade_probability(json_reply, 1, "json") == pytest.approx(0.8)
    assert grade_probability(reasoning, 1, "digit") == pytest.approx(0.5)  # the first "1"


@pytest.mark.parametrize(
    "tokens",
    [None, "2", [], [{"token": "3", "logprob": -0.1}], [{"token": "2", "logprob": "x"}], ["2"]],
)
def test_grade_probability_is_none_when_the_tokens_do_not_hold_the_grade(tokens):
    assert grade_probability(tokens, 2, "digit") is None
