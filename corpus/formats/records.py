"""What the readers return and the writers take: answers, questions, judgments, and label rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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


@dataclass(frozen=True)
class LabelRow:
    question_id: str
    question_text: str
    split: str
    answer_id: str
    stars: int
    rater_count: int = 1
    disagreement: int = 0
    judge_count: int = 0  # how many of the rater_count ratings came from judges (models)

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
            "judge_count": self.judge_count,
        }
