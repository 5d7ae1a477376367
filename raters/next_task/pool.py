"""The candidate table: every question's pool of answers, from several rankings, not only the champion's.

The default ranker's champion and, for a builtin ranker, its latest challenger (the latest version that
ranks differently) and the ``bm25`` baseline, each one's top k, interleaved (champion's 1st, the next
ranking's 1st, ..., champion's 2nd, ...; an answer once). Raters who only ever see the champion's top k
never rate the good answers it misses, so no training can learn them; the other rankings show them
(bench_loop: with the champion's top k alone the champion closed 92% of covidfaq's gap to the upper bound
and none of semeval16b's; pooled, 98% and all of it). Until a ranker can answer, the top k comes from
plain term overlap between question and answers (:mod:`.term_overlap`).

Asking the ranker for every question is far too slow for a request: the table is built by a background
job and kept in the database (:mod:`.table`, :mod:`.refresh`).
"""

from __future__ import annotations

import logging

from corpus.models import Answer, Collection
from rankers.backends import RankerError, RankerUnavailable, RankQuery, get_backend
from rankers.builtin import method_of
from rankers.models import Ranker, RankerKind, RankerVersion
from rankers.reranking import reranks
from rankers.selectors import default_ranker, ranking_version
from raters.next_task.term_overlap import term_overlap_ranking

logger = logging.getLogger(__name__)

# Pages stay short enough to judge carefully even when the collection's k is large.
MAX_TOP_K = 20


def _backend_for(ranker: Ranker, version: RankerVersion | None = None):
    """The backend ranking as ``version`` of the ranker does, or None when it cannot be built."""
    try:
        return get_backend(ranker, version)
    except Exception:  # a misconfigured ranker must not stop people from rating
        logger.warning("cannot build a backend for ranker %s; using term overlap", ranker.pk, exc_info=True)
        return None


def _ranker_table(
    ranker: Ranker,
    version: RankerVersion | None,
    questions: list[tuple[int, str, str]],
    ids_by_external: dict[str, int],
    k: int,
) -> tuple[dict[int, list[int]], bool]:
    """{question id: top k answer ids} from the ranker for the questions it could rank; and whether it was
    reachable throughout (False: the rest fall back to term overlap and the table is refreshed soon)."""
    backend = _backend_for(ranker, version)
    if backend is None:
        return {}, True
    table: dict[int, list[int]] = {}
    try:
        for question_id, external_id, text in questions:
            try:
                ranking = backend.rank(RankQuery(external_id=external_id, text=text), k)
            except RankerUnavailable:
                logger.warning("ranker %s unavailable; term overlap for the remaining questions", ranker.pk)
                return table, False
            except RankerError:
                logger.warning(
                    "ranker %s failed on question %s; term overlap", ranker.pk, question_id, exc_info=True
                )
                continue
            table[question_id] = [ids_by_external[a] for a in ranking.ids if a in ids_by_external][:k]
        return table, True
    finally:
        close = getattr(backend, "close", None)  # HTTP backends hold a connection pool
        if close is not None:
            close()


def top_k(*, collection: Collection) -> int:
    return max(1, min(collection.ndcg_k, MAX_TOP_K))


def _ranks_as(version: RankerVersion, kind: str = RankerKind.BUILTIN) -> tuple:
    """What decides how a version ranks: two versions with the same rank alike. Every version of an
    engine or http ranker that does not rerank ranks as the engine (or service) does."""
    if kind != RankerKind.BUILTIN and not reranks(version):
        return ("service",)
    method = method_of(version)
    if method == "bm25":
        return (method,)
    params = (version.details or {}).get("params") if isinstance(version.details, dict) else None
    return (method, repr(params), version.model_file)


def pooled_versions(*, ranker: Ranker) -> list[RankerVersion | None]:
    """The versions whose top k the queue pools, in turn order: the champion (None: the ranker's own
    default), its latest challenger (the latest other version that ranks differently from the champion)
    and the baseline that needs no ratings (a builtin ranker's ``bm25`` version; an engine or http
    ranker's engine as it is, e.g. its v1), each once.

    An engine ranker's challenger matters as a builtin one's does: pooling only the champion, its
    reranker's top 10 was never rated where the engine ranks lower, so the gate could not see it (on
    the Cranfield demo over OpenSearch, bench_loop's champion stayed the engine, 0.049 below the fusion
    every Train made, and the queue ran dry at 10 ratings per question)."""
    champion = ranking_version(ranker=ranker)
    if champion is None:
        return [champion]
    kind = ranker.kind
    others = list(
        RankerVersion.objects.filter(ranker=ranker).exclude(pk=champion.pk).order_by("-created_at", "-id")
    )
    pooled: list[RankerVersion | None] = [champion]
    seen = {_ranks_as(champion, kind)}
    challenger = next((v for v in others if _ranks_as(v, kind) not in seen), None)
    if kind == RankerKind.BUILTIN:
        baseline = next((v for v in others if method_of(v) == "bm25"), None)
    else:
        baseline = next((v for v in others if not reranks(v)), None)
    for version in (challenger, baseline):
        if version is not None and _ranks_as(version, kind) not in seen:
            pooled.append(version)
            seen.add(_ranks_as(version, kind))
    return pooled


def interleaved(rankings: list[list[int]], depth: int) -> list[int]:
    """The rankings' top ``depth`` taken in turns (1st of each, then 2nd of each, ...), each answer once."""
    pooled: dict[int, None] = {}
    for rank in range(depth):
        for ranking in rankings:
            if rank < len(ranking):
                pooled.setdefault(ranking[rank])
    return list(pooled)


def pooled_rankings(
    *, collection: Collection, questions: list[tuple[int, str, str]], k: int
) -> tuple[dict[int, list[int]], bool, str]:
    """The pool of each of ``questions`` ((id, external id, text)): the top k of each pooled version of the
    default ranker, interleaved (``pooled_versions``, ``interleaved``), else term overlap; whether the
    ranker was reachable throughout; and which answered ("ranker", or "term overlap" for every question).

    Costs a ranking per pooled version and question (term overlap reads every answer): the candidate
    table's job calls it (:mod:`.table`), never a rater's request."""
    ranker = default_ranker(collection=collection)
    versions = pooled_versions(ranker=ranker) if ranker is not None else []
    table: dict[int, list[int]] = {}
    reachable = True
    if ranker is not None and questions:
        ids_by_external = dict(Answer.objects.filter(collection=collection).values_list("external_id", "id"))
        rankings = []
        for version in versions:
            ranked, answered = _ranker_table(ranker, version, questions, ids_by_external, k)
            rankings.append(ranked)
            reachable = reachable and answered
        for question_id, _, _ in questions:
            found = [ranked[question_id] for ranked in rankings if question_id in ranked]
            if found:
                table[question_id] = interleaved(found, k)
    source = "ranker" if table else "term overlap"
    missing = [(q, text) for q, _, text in questions if q not in table]
    if missing:
        answers = answer_texts(collection=collection)
        table.update(term_overlap_ranking(questions=missing, answers=answers, k=k))
    return table, reachable, source


def answer_texts(*, collection: Collection, limit: int | None = None) -> list[tuple[int, str]]:
    """(id, title and body) of the collection's answers, or of its first ``limit`` (by id): what term
    overlap ranks."""
    rows = Answer.objects.filter(collection=collection).values_list("id", "title", "body")
    if limit is not None:
        rows = rows.order_by("id")[:limit]
    return [(a, f"{title} {body}") for a, title, body in rows]
