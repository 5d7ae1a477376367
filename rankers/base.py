"""The one interface every ranker kind implements: ``rank(question, k) -> [(answer external id, score)]``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class RankerError(Exception):
    """The ranker gave an answer we cannot use (malformed body, duplicate ids, bad config). Not retried."""


class RankerUnavailable(RankerError):
    """A transient failure (timeout, connection refused, HTTP 5xx) that may succeed when retried."""


@dataclass(frozen=True)
class RankQuery:
    external_id: str
    text: str


@dataclass
class Ranking:
    """Answers in rank order, best first, with the ranker's scores.

    ``unknown_ids`` lists ids the ranker returned that the collection does not know; they stay in
    ``answers`` (they took a rank) and count as unlabelled.
    """

    answers: list[tuple[str, float]]
    unknown_ids: list[str] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return [answer_id for answer_id, _ in self.answers]


class RankerBackend(Protocol):
    def rank(self, query: RankQuery, k: int) -> Ranking: ...
