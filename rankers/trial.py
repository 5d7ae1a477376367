"""Try a ranker on one question (the Rankers page's **Try it** and ``POST /api/rankers/{id}/try/``):
the mapped result, or what failed, said exactly. Nothing is stored.

For an ``engine`` ranker a failure carries ``part`` (the mapping path that failed, e.g.
``response.hits.hits[3]._id missing``) and ``engine_message`` (the engine's own error message,
shortened); for every kind ``detail`` is the error as evaluations report it. Any ranker kind can be tried.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from corpus.models import Answer
from rankers.backends import get_backend
from rankers.base import RankerError, RankerUnavailable, RankQuery
from rankers.models import Ranker

MAX_QUESTION_CHARS = 10_000
MAX_ROWS = 100


@dataclass(frozen=True)
class TriedAnswer:
    rank: int
    id: str
    score: float
    title: str | None  # None: an id the collection does not know


@dataclass(frozen=True)
class TryFailure:
    detail: str
    transient: bool  # a timeout, refused connection or 5xx (still failing after the retries)
    part: str | None = None
    engine_message: str | None = None
    status: int | None = None


@dataclass(frozen=True)
class TryResult:
    question: str
    rows: int
    seconds: float
    answers: list[TriedAnswer] = field(default_factory=list)
    unknown_ids: list[str] = field(default_factory=list)
    error: TryFailure | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def check_try_input(*, question: object, rows: object) -> tuple[str, int]:
    """The question and rows, or ValueError naming the field (``question`` or ``rows``)."""
    if not isinstance(question, str) or not question.strip():
        raise ValueError("question: type a question to rank.")
    if len(question) > MAX_QUESTION_CHARS or "\x00" in question:
        raise ValueError(f"question: at most {MAX_QUESTION_CHARS:,} characters, no NUL character.")
    if isinstance(rows, bool) or not isinstance(rows, int) or not 1 <= rows <= MAX_ROWS:
        raise ValueError(f"rows: a whole number from 1 to {MAX_ROWS}.")
    return question.strip(), rows


def ranker_try(*, ranker: Ranker, question: str, rows: int) -> TryResult:
    """Rank ``question`` with the ranker's ranking version (its champion), as evaluations would."""
    question, rows = check_try_input(question=question, rows=rows)
    started = time.monotonic()
    try:
        backend = get_backend(ranker)
        ranking = backend.rank(RankQuery(external_id="try", text=question), rows)
    except RankerError as exc:
        return TryResult(
            question=question,
            rows=rows,
            seconds=time.monotonic() - started,
            error=TryFailure(
                detail=str(exc),
                transient=isinstance(exc, RankerUnavailable),
                part=getattr(exc, "part", None),
                engine_message=getattr(exc, "engine_message", None),
                status=getattr(exc, "status", None),
            ),
        )
    seconds = time.monotonic() - started
    titles = dict(
        Answer.objects.filter(collection_id=ranker.collection_id, external_id__in=ranking.ids)
        .order_by()  # by the unique index: the default order makes SQLite walk the whole collection
        .values_list("external_id", "title")
    )
    return TryResult(
        question=question,
        rows=rows,
        seconds=seconds,
        answers=[
            TriedAnswer(rank=i, id=answer_id, score=score, title=titles.get(answer_id))
            for i, (answer_id, score) in enumerate(ranking.answers, start=1)
        ],
        unknown_ids=list(ranking.unknown_ids),
    )
