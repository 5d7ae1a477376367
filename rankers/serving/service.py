"""An engine or http ranker's reranking service: the engine call, the rerank within the budget, the
fallbacks (``rankers.serving``), and fault injection for tests and benchmarks."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import suppress
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from rankers.backends import RankerError, RankQuery, get_backend, service_backend
from rankers.base import Ranking
from rankers.config import validate_ranker_config
from rankers.engine_config import rerank_settings
from rankers.http import HttpBackend
from rankers.models import Ranker, RankerVersion
from rankers.reranking import VECTORS_MISSING, RerankingBackend, reranks
from rankers.selectors import ranking_version
from rankers.serving.protocol import RankRequest

logger = logging.getLogger(__name__)

RERANK_WORKERS = 4
ENCODING_ELSEWHERE = (
    "some answers are met for the first time and another rerank is computing answers' vectors: "
    "they are computed when a later request meets them"
)


class ServeError(Exception):
    """The ranker cannot be served (an unusable config); the command says so and exits."""


class Faults:
    def __init__(
        self,
        *,
        latency_ms: int,
        fail_first: int,
        garbage: bool,
        unknown_ids: int,
        rerank_delay_ms: int = 0,
        rerank_fail: bool = False,
    ) -> None:
        self.latency = latency_ms / 1000
        self.garbage = garbage
        self.unknown_ids = unknown_ids
        self.rerank_delay = rerank_delay_ms / 1000
        self.rerank_fail = rerank_fail
        self._failures_left = fail_first
        self._lock = threading.Lock()

    def should_fail(self) -> bool:
        with self._lock:
            if self._failures_left > 0:
                self._failures_left -= 1
                return True
            return False


@dataclass
class Answered:
    """What an engine ranker's server answers: the ranking, whether the version reordered it and if not,
    why (``fallback``, "" when the version does not rerank), with the milliseconds spent."""

    ranking: Ranking
    reranked: bool
    fallback: str = ""
    warning: str = ""
    engine_ms: float | None = None
    rerank_ms: float | None = None
    candidates: Ranking | None = None  # what was reranked (the engine's, or the caller's): an online
    # test's challenger reranks the same


class UpstreamError(Exception):
    """The engine (or ranker service) failed: a 502 with its message."""


class RerankingService:
    """An engine (or http) ranker's version, served: its service called, the candidates reranked within
    the budget. Holds no database connection; safe to share between the request threads.

    ``reranking`` None: the version ranks as the service does; ``broken`` says why when it was meant to
    rerank but its reranker could not be loaded.
    """

    def __init__(
        self,
        *,
        first: HttpBackend,
        reranking: RerankingBackend | None,
        depth: int,
        budget_ms: int,
        faults: Faults,
        broken: str = "",
        workers: int = RERANK_WORKERS,
    ) -> None:
        self.first = first
        self.reranking = reranking
        self.depth = depth
        self.budget_ms = budget_ms
        self.faults = faults
        self.broken = broken
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rerank")
        # Its own threads: a rerank waits for its question's prepare, which must never queue behind reranks.
        self.prepare_pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="prepare")
        self.encoding = threading.Lock()  # held by the one rerank that encodes answers

    @property
    def active(self) -> bool:
        return self.reranking is not None and self.reranking.reranker.active

    def warm_up(self) -> None:
        """Load what the first rerank would (the embedding model, the code paths), encoding nothing new."""
        if self.reranking is None or not self.reranking.index.ids:
            return
        ids = self.reranking.index.ids[: self.depth]
        candidates = Ranking(answers=[(answer_id, float(len(ids) - i)) for i, answer_id in enumerate(ids)])
        self.reranking.rerank_why(RankQuery("warm-up", "warm up"), candidates, 10, encode=False)

    def search(self, query: RankQuery, rows: int) -> Answered:
        """POST /: the service's answers to ``query``, reranked within the budget. UpstreamError when the
        service fails. The question's vector is computed while the engine searches (``prepare``)."""
        prepared = None
        if self.reranking is not None and self.active:
            prepared = self.prepare_pool.submit(self.reranking.reranker.prepare, query.text)
        started = time.perf_counter()
        try:
            ranking = self.first.rank(query, max(rows, self.depth) if self.active else rows)
        except RankerError as exc:
            raise UpstreamError(str(exc)) from exc
        engine_ms = (time.perf_counter() - started) * 1000
        answered = self.rerank(query, ranking, rows, prepared=prepared)
        answered.engine_ms = engine_ms
        answered.candidates = ranking
        return answered

    def rank(self, request: RankRequest) -> Answered:
        """POST /rank: the caller's candidates reranked within the budget."""
        answered = self.rerank(request.query, request.candidates, request.rows)
        answered.candidates = request.candidates
        signals = self.reranking.reranker.signals if self.reranking is not None else ()
        if not request.scored and request.candidates.answers and "engine" in signals:
            n = len(request.candidates.answers)
            answered.warning = (
                f"the candidates have no scores: the version's engine signal was given {n}, {n - 1}, ..., 1 "
                "in their order, not the engine's scores it learned from"
            )
        return answered

    def rerank(
        self, query: RankQuery, ranking: Ranking, rows: int, *, prepared: Future[None] | None = None
    ) -> Answered:
        """``ranking`` (the service's, best first) reranked if that takes at most the budget, else its
        own order with the reason. ``prepared``: the question's ``prepare`` under way, awaited first."""
        own = Ranking(answers=ranking.answers[:rows], unknown_ids=ranking.unknown_ids)
        if self.reranking is None:
            return Answered(ranking=own, reranked=False, fallback=self.broken)
        if not ranking.answers:
            return Answered(ranking=own, reranked=False, fallback="there are no answers to rerank")
        started = time.perf_counter()
        future = self.pool.submit(self._rerank, query, ranking, rows, prepared)
        try:
            reranked, why = future.result(timeout=self.budget_ms / 1000)
        except FutureTimeout:
            future.cancel()  # still queued: never run; running: finishes and warms the caches
            reranked, why = own, f"reranker took longer than {self.budget_ms} ms"
        except Exception as exc:
            logger.exception("rerank of question %s failed", query.external_id)
            reranked, why = own, f"reranker failed: {str(exc) or repr(exc)}"
        elapsed = (time.perf_counter() - started) * 1000
        return Answered(ranking=reranked, reranked=not why, fallback=why, rerank_ms=elapsed)

    def _rerank(
        self, query: RankQuery, ranking: Ranking, rows: int, prepared: Future[None] | None
    ) -> tuple[Ranking, str]:
        assert self.reranking is not None
        if prepared is not None:
            # Its failure (the model unusable) is the rerank's to report: it meets the same one.
            with suppress(Exception):
                prepared.result()
        if self.faults.rerank_delay:
            time.sleep(self.faults.rerank_delay)
        if self.faults.rerank_fail:
            raise RuntimeError("injected failure (--rerank-fail)")
        reranked, why = self.reranking.rerank_why(query, ranking, rows, encode=False)
        if why != VECTORS_MISSING:
            return reranked, why
        # Answers met for the first time: their vectors are encoded (in batches of 16, the top `depth` at
        # most) by one rerank at a time, so that encodings (~25 ms of both cores per answer) never hold
        # every worker and the reranks of known answers behind them. Past the budget the caller has the
        # engine's order and the encoding goes on, for the next request.
        if not self.encoding.acquire(blocking=False):
            return reranked, ENCODING_ELSEWHERE
        try:
            return self.reranking.rerank_why(query, ranking, rows)
        finally:
            self.encoding.release()


def reranking_service(
    ranker: Ranker, version: RankerVersion | None, faults: Faults, *, budget_ms: int | None = None
) -> tuple[RerankingService, RankerVersion | None]:
    """The service of an engine or http ranker's ``version`` (None: its champion), loaded now, and the
    version served. A version whose reranker can't be loaded is served as the engine's order, saying why.
    ``budget_ms`` None: the ranker's config says."""
    try:
        config = validate_ranker_config(kind=ranker.kind, config=ranker.config)
        first = service_backend(ranker, config)
    except (ValidationError, RankerError) as exc:
        raise ServeError(f"ranker {ranker.name!r} cannot be served: {exc}") from exc
    if version is None:
        version = ranking_version(ranker=ranker)
    depth, configured_ms = rerank_settings(config)
    budget_ms = configured_ms if budget_ms is None else budget_ms
    reranking: RerankingBackend | None = None
    broken = ""
    if reranks(version):
        try:
            backend = get_backend(ranker, version)
        except RankerError as exc:
            broken = f"the reranker of version {version.label if version else '?'} cannot be loaded: {exc}"
        else:
            assert isinstance(backend, RerankingBackend)
            reranking = backend
    service = RerankingService(
        first=first, reranking=reranking, depth=depth, budget_ms=budget_ms, faults=faults, broken=broken
    )
    return service, version
