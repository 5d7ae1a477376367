"""The ranker protocol's requests: POST /, POST /rank and POST /encode, their limits and checks
(``rankers.serving``)."""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass, field
from typing import Any

from rankers.backends import RankQuery
from rankers.base import Ranking
from ubi.log import caller_ids
from ubi.records import RecordError

logger = logging.getLogger(__name__)


MAX_BODY_BYTES = 1_000_000
MAX_ROWS = 1000
MAX_CANDIDATES = 1000
MAX_ID_CHARS = 200  # an answer's external id in the collection is at most this long


class ProtocolError(ValueError):
    pass


def _query_and_rows(payload: Any) -> tuple[RankQuery, int]:
    question = payload.get("question") if isinstance(payload, dict) else None
    if not isinstance(question, dict):
        raise ProtocolError('"question" must be an object with "id" and "text"')
    qid, text = question.get("id"), question.get("text")
    if isinstance(qid, bool) or not isinstance(qid, str | int):
        raise ProtocolError('"question.id" must be a string')
    if not isinstance(text, str):
        raise ProtocolError('"question.text" must be a string')
    rows = payload.get("rows", 10)
    if isinstance(rows, bool) or not isinstance(rows, int) or not 1 <= rows <= MAX_ROWS:
        raise ProtocolError(f'"rows" must be a whole number from 1 to {MAX_ROWS}')
    return RankQuery(external_id=str(qid), text=text), rows


def _json(body: bytes) -> Any:
    try:
        return json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        raise ProtocolError("body must be JSON") from None


def _ids(payload: Any) -> dict[str, str]:
    try:
        return caller_ids(payload)
    except RecordError as exc:
        raise ProtocolError(str(exc)) from None


def parse_request(body: bytes) -> tuple[RankQuery, int, dict[str, str]]:
    """The question and rows of a rank request, and the UBI ids it carries (``query_id``, ``client_id``,
    ``user_id``: optional), or ProtocolError saying what is wrong."""
    payload = _json(body)
    query, rows = _query_and_rows(payload)
    return query, rows, _ids(payload)


@dataclass(frozen=True)
class RankRequest:
    """A ``POST /rank``: the question, the caller's candidates best first, and whether they had scores."""

    query: RankQuery
    candidates: Ranking
    rows: int
    scored: bool
    ids: dict[str, str] = field(default_factory=dict)  # the caller's UBI ids (query_id, client_id, user_id)


RANK_FIELDS = ("question", "candidates", "rows", "query_id", "client_id", "user_id")
CANDIDATE_FIELDS = ("id", "score")


def parse_rank_request(body: bytes) -> RankRequest:
    """A ``POST /rank`` body checked field by field, or ProtocolError naming the first field that is wrong."""
    payload = _json(body)
    if not isinstance(payload, dict):
        raise ProtocolError('body must be a JSON object with "question", "candidates" and "rows"')
    for name in payload:
        if name not in RANK_FIELDS:
            raise ProtocolError(f'"{name}" is not a field of a rank request ({", ".join(RANK_FIELDS)})')
    query, rows = _query_and_rows(payload)
    ids = _ids(payload)
    if "candidates" not in payload:
        raise ProtocolError('"candidates" is missing: a list of {"id", "score"} objects, best first')
    items = payload["candidates"]
    if not isinstance(items, list):
        raise ProtocolError('"candidates" must be a list of {"id", "score"} objects, best first')
    if len(items) > MAX_CANDIDATES:
        raise ProtocolError(f'"candidates" has {len(items)} items; at most {MAX_CANDIDATES}')
    answers: list[tuple[str, float | None]] = []
    first_at: dict[str, int] = {}
    for i, item in enumerate(items):
        where = f"candidates[{i}]"
        if not isinstance(item, dict):
            raise ProtocolError(f'"{where}" must be an object with "id" and optionally "score"')
        for name in item:
            if name not in CANDIDATE_FIELDS:
                raise ProtocolError(f'"{where}.{name}" is not a field of a candidate (id, score)')
        raw_id = item.get("id")
        if isinstance(raw_id, bool) or not isinstance(raw_id, str | int) or not str(raw_id).strip():
            raise ProtocolError(f'"{where}.id" must be a non-empty string or a whole number')
        answer_id = str(raw_id).strip()
        if len(answer_id) > MAX_ID_CHARS:
            raise ProtocolError(f'"{where}.id" is longer than {MAX_ID_CHARS} characters')
        if answer_id in first_at:
            raise ProtocolError(
                f'"{where}.id" repeats "candidates[{first_at[answer_id]}].id" ({answer_id!r})'
            )
        first_at[answer_id] = i
        score: float | None = None
        if "score" in item:
            raw_score = item["score"]
            if (
                isinstance(raw_score, bool)
                or not isinstance(raw_score, int | float)
                or not math.isfinite(raw_score)
            ):
                raise ProtocolError(f'"{where}.score" must be a finite number')
            score = float(raw_score)
        answers.append((answer_id, score))
    scored = bool(answers) and answers[0][1] is not None
    for i, (_, score) in enumerate(answers):
        if (score is not None) != scored:
            missing = i if scored else 0
            raise ProtocolError(
                f'"candidates[{missing}].score" is missing: give a score to every candidate or to none'
            )
    n = len(answers)
    ranking = Ranking(
        answers=[
            (answer_id, score if score is not None else float(n - i))
            for i, (answer_id, score) in enumerate(answers)
        ]
    )
    return RankRequest(query=query, candidates=ranking, rows=rows, scored=scored, ids=ids)


def parse_encode_request(body: bytes) -> str:
    """The question text of a ``POST /encode`` (``{"text": "..."}``), or ProtocolError naming the field."""
    payload = _json(body)
    if not isinstance(payload, dict) or not isinstance(payload.get("text"), str):
        raise ProtocolError('"text" must be a string: the question to encode')
    for name in payload:
        if name != "text":
            raise ProtocolError(f'"{name}" is not a field of an encode request (text)')
    return payload["text"]
