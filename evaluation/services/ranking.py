"""Asking a ranker, in a worker: one question ranked (``rank_once``, never raises), at most
``EVALUATION_CONCURRENCY`` requests in flight per worker process, and each ranker's backend kept for a
while (``backend_for``) by the chunks a worker evaluates.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass

from django.conf import settings

from corpus.models import Question
from evaluation.models import EvaluationRun
from jobs import failure_reason
from rankers.backends import get_backend
from rankers.base import RankerError, RankerUnavailable, Ranking, RankQuery

logger = logging.getLogger(__name__)


_in_flight_limit: tuple[int, threading.BoundedSemaphore] | None = None


def _in_flight() -> threading.BoundedSemaphore:
    """The worker process's bound on ranker requests in flight (EVALUATION_CONCURRENCY), shared by all the
    chunks it evaluates at once, so one chunk's tail and database writes overlap the next chunk's requests."""
    global _in_flight_limit
    size = settings.EVALUATION_CONCURRENCY
    with _backends_lock:
        if _in_flight_limit is None or _in_flight_limit[0] != size:
            _in_flight_limit = (size, threading.BoundedSemaphore(size))
        return _in_flight_limit[1]


@dataclass
class Outcome:
    question: Question
    ranking: Ranking | None = None
    error: str = ""


def rank_once(backend, question: Question, depth: int) -> Outcome:
    """Ask the ranker once; never raises.

    Transient errors are retried in one place only, by the backend itself (an http ranker's ``retries``,
    whose message says how many attempts it made): retrying here too would multiply the attempts.
    """
    query = RankQuery(external_id=question.external_id, text=question.text)
    try:
        with _in_flight():
            ranking = backend.rank(query, depth)
    except RankerUnavailable as exc:
        return Outcome(question, error=f"Ranker unavailable: {exc}")
    except RankerError as exc:
        return Outcome(question, error=f"Ranker error: {exc}")
    except Exception as exc:  # a bug in a backend must fail the question, not hang the run
        logger.exception("ranker backend crashed on question %s", question.pk)
        return Outcome(question, error=f"Ranker crashed: {failure_reason(exc)}")
    ids = ranking.ids[:depth]
    if len(set(ids)) != len(ids):
        return Outcome(question, error="Ranker error: the ranking lists the same answer more than once")
    return Outcome(
        question, ranking=Ranking(answers=ranking.answers[:depth], unknown_ids=ranking.unknown_ids)
    )


# One backend per ranker, version and config, reused by the chunks a worker evaluates for a while: an HTTP
# backend holds a connection pool (and the collection's answer ids), a builtin one its loaded index.
BACKEND_TTL_SECONDS = 60
_backends: dict[tuple, tuple[float, object]] = {}
_backends_lock = threading.Lock()


def backend_for(run: EvaluationRun):
    key = (run.ranker_id, run.ranker_version_id, json.dumps(run.ranker.config, sort_keys=True))
    now = time.monotonic()
    with _backends_lock:
        for stale in [k for k, (made, _) in _backends.items() if now - made > BACKEND_TTL_SECONDS]:
            del _backends[stale]
        if key in _backends:
            return _backends[key][1]
    backend = get_backend(run.ranker, run.ranker_version)
    with _backends_lock:
        _backends[key] = (now, backend)
    return backend
