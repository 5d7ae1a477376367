"""The candidate table as the queue reads it: persisted per collection (``raters.models.CandidateTable``),
built by a background job (:mod:`.refresh`), never by a rater's request.

Every request reads the collection's state (``table_state``: a few single-row reads, the same cost at any
number of answers) and the table row's header; the table itself is read once per process and version
(``served``). When the state moved on (a new version, an import, an embeddings build, an evaluation), the
request asks for a refresh (``refresh_request``: one conditional UPDATE, the job queued once; a change
queues it at once too, :mod:`.refresh`) and the previous table serves until the job saves the new one; a
collection with no table yet (its first build under way) is served by the term-overlap fallback
(:mod:`.fallback`: a few questions, a cost that does not grow with the answers). No request builds a table,
whatever the collection's size. ``served(...).note`` says which, for the rating page.

The job's build (``table_build``) is incremental: only the questions added or edited since the last build
are ranked when nothing else changed, and only the evaluation's top k re-read when only a new evaluation
finished.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, F, IntegerField, Subquery, Value
from django.utils import timezone

from corpus.models import Answer, Collection, Question
from evaluation.models import EvaluationRun, QuestionResult
from jobs import enqueue_after_commit
from rankers.models import EmbeddingBuild, Ranker, RankerVersion
from rankers.selectors import default_ranker
from raters.models import CandidateTable, TableStatus
from raters.next_task.fallback import fallback_table
from raters.next_task.pool import MAX_TOP_K, pooled_rankings, top_k

logger = logging.getLogger(__name__)

# A table built while the ranker was unreachable (term overlap stood in) is refreshed after this long.
UNREACHABLE_RETRY_SECONDS = 60

FRESH, STALE, PREPARING = "fresh", "stale", "preparing"


def latest_run(*, collection: Collection, ranker: Ranker | None | bool = True):
    """The latest successful evaluation of the collection's default ranker (``ranker``, when the caller
    read it already), or None."""
    if ranker is True:
        ranker = default_ranker(collection=collection)
    if ranker is None or ranker is False:
        return None
    return (
        EvaluationRun.objects.succeeded()
        .filter(collection=collection, ranker=ranker)
        .order_by("-finished_at", "-created_at", "-id")
        .first()
    )


# Per process: (collection id, ranker id) -> the SQL of ``_state_query`` and its parameters: building and
# compiling that query through the ORM cost more CPU than running it, on every call of the queue.
_STATE_SQL: dict[tuple[int, int | None], tuple[str, tuple]] = {}


def _state_query(collection: Collection, ranker: Ranker | None):
    """The one query of ``table_state``: the collection's k and change markers, the ranker's latest version
    and how many it has, the latest embeddings build, the latest evaluation of the ranker."""
    none = Value(None, output_field=IntegerField())
    versions = RankerVersion.objects.filter(ranker=ranker)
    return (
        Collection.objects.filter(pk=collection.pk)
        .annotate(
            latest=Subquery(versions.order_by("-created_at", "-id").values("id")[:1]) if ranker else none,
            count=Subquery(versions.values("ranker").annotate(n=Count("id")).values("n")[:1])
            if ranker
            else none,
            embeddings=Subquery(
                EmbeddingBuild.objects.succeeded()
                .filter(collection=collection)
                .order_by("-id")
                .values("id")[:1]
            ),
            run=Subquery(
                EvaluationRun.objects.succeeded()
                .filter(collection=collection, ranker=ranker)
                .order_by("-finished_at", "-created_at", "-id")
                .values("id")[:1]
            )
            if ranker
            else none,
        )
        .values_list("ndcg_k", "answers_version", "questions_version", "latest", "count", "embeddings", "run")
    )


def _state_row(collection: Collection, ranker: Ranker | None) -> tuple:
    """``_state_query``'s one row, its SQL compiled once per process, collection and ranker (its values are
    integers or NULL: no conversion from the database's types)."""
    key = (collection.pk, ranker.pk if ranker else None)
    compiled = _STATE_SQL.get(key)
    if compiled is None:
        compiled = _STATE_SQL[key] = _state_query(collection, ranker).query.sql_with_params()
    sql, params = compiled
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        row = cursor.fetchone()
    if row is None:
        raise Collection.DoesNotExist(f"collection {collection.pk}")
    return row


def table_state(*, collection: Collection) -> dict:
    """The collection's state a table is built for: {"rank": what decides the pools, as a digest,
    "questions": the questions' change marker, "run": the latest evaluation's id}.

    What decides the pools: the collection's k and answers (their change marker, not a scan of them), the
    default ranker (kind, config, champion), its versions (the latest and how many: the pooled ones follow
    from them), the latest embeddings build (a version using embeddings ranks as BM25 until they are built).
    Two queries, the same cost at any number of answers."""
    ranker = default_ranker(collection=collection)
    ndcg_k, answers_version, questions_version, latest, count, embeddings, run = _state_row(
        collection, ranker
    )
    described = (
        f"{collection.pk}:{ndcg_k}:{answers_version}:"
        f"{ranker.pk if ranker else '-'}:{ranker.kind if ranker else '-'}:{ranker.config if ranker else '-'}:"
        f"{ranker.champion_id if ranker else '-'}:{latest}:{count}:{embeddings}"
    )
    return {
        "rank": hashlib.sha256(described.encode()).hexdigest(),
        "questions": questions_version,
        "run": run,
    }


def _run_tops(collection: Collection, run: EvaluationRun | None) -> dict[str, list]:
    """{question id: [the run's top k as answer ids the collection knows, its NDCG@k]} of ``run``: the
    external ids of its top k only are looked up, in batches."""
    if run is None:
        return {}
    run_k = max(1, min(run.ndcg_k, MAX_TOP_K))
    rows = [
        (q, list((ranked or [])[:run_k]), ndcg)
        for q, ranked, ndcg in QuestionResult.objects.filter(run=run).values_list(
            "question_id", "ranked_answer_ids", "ndcg"
        )
    ]
    wanted = sorted({a for _, ranked, _ in rows for a in ranked})
    ids: dict[str, int] = {}
    for start in range(0, len(wanted), 2000):
        ids.update(
            Answer.objects.filter(
                collection=collection, external_id__in=wanted[start : start + 2000]
            ).values_list("external_id", "id")
        )
    return {str(q): [[ids[a] for a in ranked if a in ids], ndcg] for q, ranked, ndcg in rows}


def table_build(*, collection: Collection, state: dict, previous: CandidateTable) -> None:
    """Build the table for ``state`` into ``previous`` (saved with its version one higher).

    Incremental: with the same ranking state and a reachable ranker before, only the questions added or
    edited since the previous build are ranked (deleted ones dropped); with the same evaluation, its top
    k are kept."""
    started = timezone.now()
    k = top_k(collection=collection)
    questions = list(
        Question.objects.filter(collection=collection).values_list("id", "external_id", "text", "updated_at")
    )
    parts = previous.parts or {}
    since = parts.get("questions_at")
    same_rank = parts.get("rank") == state["rank"] and previous.reachable and previous.built_at is not None
    if same_rank and since:
        since_at = datetime.fromisoformat(since)
        table = {
            str(q): previous.table[str(q)]
            for q, _, _, updated in questions
            if str(q) in previous.table and updated < since_at
        }
        todo = [(q, e, t) for q, e, t, _ in questions if str(q) not in table]
        source = previous.source
    else:
        table, todo, source = {}, [(q, e, t) for q, e, t, _ in questions], ""
    reachable = True
    if todo:
        ranked, reachable, todo_source = pooled_rankings(collection=collection, questions=todo, k=k)
        table.update({str(q): answers for q, answers in ranked.items()})
        source = todo_source if not source or not table else (source if source == todo_source else "ranker")
    if parts.get("run") != state["run"] or previous.run_id != state["run"] or not same_rank:
        run = EvaluationRun.objects.filter(pk=state["run"]).first() if state["run"] else None
        previous.run_top = _run_tops(collection, run)
        previous.run_id = state["run"]
    previous.table = table
    previous.source = source or "term overlap"
    previous.reachable = reachable
    previous.parts = {**state, "questions_at": started.isoformat()}
    previous.built_at = timezone.now()
    previous.version = (previous.version or 0) + 1
    previous.save(
        update_fields=["table", "source", "reachable", "parts", "built_at", "version", "run_top", "run_id"]
    )


def table_row(*, collection: Collection) -> CandidateTable:
    """The collection's table row, made (empty, no job yet) when it has none."""
    row = CandidateTable.objects.filter(collection=collection).first()
    if row is not None:
        return row
    try:
        with transaction.atomic():
            return CandidateTable.objects.create(collection=collection, status=TableStatus.READY)
    except IntegrityError:  # another request made it at the same moment
        return CandidateTable.objects.get(collection=collection)


def refresh_request(*, row: CandidateTable, state: dict) -> bool:
    """Ask for the table of ``state``: the job is queued when none is queued or running (one
    conditional UPDATE, so of many requests seeing the change one queues it); a running job sees the
    new ``wanted`` state when it finishes and builds again. True when this call queued the job."""
    # A refresh that failed for this very state is not queued again by every request (the next change
    # queues it; the previous table serves meanwhile); one that failed for an older state is.
    idle = [TableStatus.READY] if row.status == TableStatus.FAILED and row.wanted == state else [
        TableStatus.READY, TableStatus.FAILED]  # fmt: skip
    queued = CandidateTable.objects.filter(pk=row.pk, status__in=idle).update(
        status=TableStatus.QUEUED, wanted=state, asked=F("asked") + 1, created_at=timezone.now(), error=""
    )
    if not queued:
        if row.wanted != state:
            CandidateTable.objects.filter(pk=row.pk).update(wanted=state, asked=F("asked") + 1)
        return False
    enqueue_after_commit("raters.candidates_refresh", kwargs={"table_id": row.pk}, robust=True)
    return True


def is_fresh(row: CandidateTable, state: dict) -> bool:
    parts = row.parts or {}
    if row.built_at is None or any(parts.get(key) != state[key] for key in ("rank", "questions", "run")):
        return False
    return row.reachable or row.built_at > timezone.now() - timedelta(seconds=UNREACHABLE_RETRY_SECONDS)


@dataclass
class Served:
    """The table a request uses, and how it stands: ``fresh`` (built for the collection as it is),
    ``stale`` (the previous table, a refresh under way) or ``preparing`` (no table yet: the term-overlap
    fallback of a few questions serves, :mod:`.fallback`). ``source``: "ranker" or "term overlap";
    ``note``: the sentence the rating page shows ("" when fresh and from the ranker)."""

    table: dict[int, list[int]]
    run_top: dict[int, tuple[list[int], float | None]]
    freshness: str
    source: str
    questions_version: int
    note: str = ""
    state: dict = field(default_factory=dict)
    key: tuple = ()  # the table's (row, version, built at): equal keys, equal table and run tops


# Per process: collection id -> ((row id, version, built at), table, run tops), read again when it changes.
_PROCESS_TABLES: dict[int, tuple[tuple, dict[int, list[int]], dict[int, tuple[list[int], float | None]]]] = {}


def _note(freshness: str, source: str) -> str:
    if freshness == PREPARING:
        return (
            "The queue is being prepared: while the ranker finds each question's candidate answers in the "
            "background, a few questions are offered with the answers sharing the most words with them "
            "(term overlap)."
        )
    if freshness == STALE:
        return (
            "The collection changed (a new version, an import or new embeddings): until the candidate "
            "answers are found again in the background, the queue offers those found before the change."
        )
    if source == "term overlap":
        return (
            "The candidate answers are found by the words they share with the question (term overlap) "
            "until the ranker can answer."
        )
    return ""


def served(*, collection: Collection) -> Served:
    """The table the queue reads now (see the module docstring): never built here. Out of date, its
    refresh is asked for (``refresh_request``) and the previous table serves, or the term-overlap
    fallback when there is none yet (``fallback.fallback_table``)."""
    state = table_state(collection=collection)
    row = CandidateTable.objects.filter(collection=collection).defer("table", "run_top").first()
    if row is None:
        row = table_row(collection=collection)
    freshness = FRESH if is_fresh(row, state) else (STALE if row.built_at is not None else PREPARING)
    if freshness != FRESH:
        refresh_request(row=row, state=state)
    if freshness == PREPARING:
        key, table = fallback_table(collection=collection, state=state)
        return Served(
            table=table,
            run_top={},
            freshness=freshness,
            source="term overlap",
            questions_version=state["questions"],
            note=_note(freshness, "term overlap"),
            state=state,
            key=key,
        )
    key = (row.pk, row.version, row.built_at)
    cached = _PROCESS_TABLES.get(collection.pk)
    if cached is None or cached[0] != key:
        table_json, run_json = CandidateTable.objects.filter(pk=row.pk).values_list("table", "run_top").get()
        cached = (
            key,
            {int(q): answers for q, answers in (table_json or {}).items()},
            {int(q): (top, ndcg) for q, (top, ndcg) in (run_json or {}).items()},
        )
        _PROCESS_TABLES[collection.pk] = cached
    return Served(
        table=cached[1],
        run_top=cached[2],
        freshness=freshness,
        source=row.source,
        questions_version=state["questions"],
        note=_note(freshness, row.source),
        state=state,
        key=key,
    )


def candidate_table(*, collection: Collection) -> dict[int, list[int]]:
    """{question id: its pool of answer ids}: the table the queue reads now (``served``)."""
    return served(collection=collection).table


def table_note(*, collection: Collection) -> str:
    """What the rating page says of the table serving now ("" when it is fresh and from the ranker)."""
    return served(collection=collection).note
