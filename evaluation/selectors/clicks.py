"""Implicit judgments of a collection's pairs from the production log (``ubi``): COEC as OpenSearch's Search
Relevance Workbench computes it, the cascade (DBN) model's attractiveness and the position-based model's,
each as 0–3 stars.

What is read: the UBI events of the collection's application (``application`` of their query, or of the
event itself when its query is unknown; by default the collection's slug, which ``ranker_server`` writes),
with ``position.ordinal ≤ max_rank`` and, when given, a UTC day within [start_date, end_date] (both days
included, as OpenSearch's ``range`` with ``format: yyyy-MM-dd`` reads them). Each event's query text is its
query record's ``user_query``.

Matching a logged (query text, object_id) to a pair of the collection: the text, **normalised**
(``ubi.production_questions.normalise_query``: case-folded, runs of white space as one space, trimmed), equals a question's normalised
text, and the object_id is an answer's ``external_id`` (what ``ranker_server`` serves as ``id``). COEC is
computed per normalised text, so "Laptop " and "laptop" are one query (SRW groups by the exact text; on a
log whose texts are already normalised the figures are SRW's). A text no question has is **unmatched**:
counted, and the frequent ones listed with their counts (production questions worth importing). Two
questions with the same normalised text both get the pair's judgment.

* COEC (``evaluation.online.coec``, ``first_ordinal=1``: our ordinals count from 1): per pair
  ``clicks / (ctr(best rank) · impressions)`` with ``ctr(r)`` over every kept event of the application,
  matched or not; stars by ``COEC_THRESHOLDS``. A pair with no impression event has COEC 0 as in SRW but
  no stars (no evidence).
* PBM (``evaluation.online.click_model``): rows (ordinal, pair, clicks, impressions) of the same events,
  where a click also counts as the hit having been seen: n = max(impression events, click events) per
  (ordinal, pair), so a page that sends clicks but no impressions still gives the model its evidence.
  Stars by ``ATTRACTIVENESS_THRESHOLDS``.
* DBN (``evaluation.online.dbn``, the default bias-corrected estimate: ``DEFAULT_METHOD``): sessions are
  query ids; a session's rows are its (ordinal, pair) with an impression or a click event, clicked when
  any click event is there (a click also counts as the hit having been shown). Its attractiveness a,
  the chance that a user who reads the hit clicks it, is what gets stars, by ``ATTRACTIVENESS_THRESHOLDS``
  (why a and not a · s: ``evaluation.online.dbn``; the simulation that chose it: bench/README.md,
  *A cascade click model for implicit labels*).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.core.cache import cache
from django.db.models import Exists, Max, OuterRef, Q, QuerySet, Subquery
from numpy.typing import NDArray

from corpus.models import Answer, Collection, Question
from evaluation.measures import CASCADE_ATTRACTIVENESS, CLICK_ATTRACTIVENESS, COEC
from evaluation.online import (
    ATTRACTIVENESS_THRESHOLDS,
    COEC_THRESHOLDS,
    NO_RANK,
    NO_STARS,
    CascadeModel,
    Coec,
    PositionBasedModel,
    coec,
    fit_dbn,
    fit_position_based_model,
    to_stars,
)
from ubi.models import UbiEvent, UbiQuery
from ubi.production_questions import logged_queries, normalise_query

DEFAULT_MAX_RANK = 20  # SRW's example and its UI's default
MAX_MAX_RANK = 1000
UNMATCHED_SHOWN = 20
COEC_METHOD, PBM_METHOD, DBN_METHOD = "coec", "pbm", "dbn"
METHODS = (DBN_METHOD, COEC_METHOD, PBM_METHOD)
# The bias-corrected estimate a clicks judge and the page use unless told otherwise: the DBN, which fits the
# cascade users the simulation proves it on (bench/README.md, *A cascade click model for implicit labels*).
DEFAULT_METHOD = DBN_METHOD
# The measure (evaluation.measures) each method's figure is shown as.
MEASURE_OF = {DBN_METHOD: CASCADE_ATTRACTIVENESS, COEC_METHOD: COEC, PBM_METHOD: CLICK_ATTRACTIVENESS}


normalise = normalise_query  # the one rule, with the log (ubi.production_questions)


@dataclass(frozen=True)
class ClickParameters:
    """What the judgments are computed from; ``application`` "" means the collection's slug."""

    max_rank: int = DEFAULT_MAX_RANK
    start_date: dt.date | None = None
    end_date: dt.date | None = None
    application: str = ""

    def __post_init__(self) -> None:
        if not 1 <= self.max_rank <= MAX_MAX_RANK:
            raise ValueError(f"max_rank must be between 1 and {MAX_MAX_RANK}, got {self.max_rank}")
        if self.start_date and self.end_date and self.start_date > self.end_date:
            raise ValueError("start_date must not be after end_date")

    def as_json(self, collection: Collection) -> dict:
        return {
            "max_rank": self.max_rank,
            "start_date": self.start_date.isoformat() if self.start_date else None,
            "end_date": self.end_date.isoformat() if self.end_date else None,
            "application": self.application or collection.slug,
        }


@dataclass(frozen=True)
class ImplicitJudgment:
    """One pair's click evidence: COEC with its counts and best rank (None: no click or impression), the
    PBM attractiveness (None: never seen) with the impressions it rests on, the DBN's attractiveness and
    satisfaction (None: never read, never clicked) with the sessions that surely read it, and each as stars
    (None: no evidence)."""

    question_id: int
    answer_id: int
    question_external_id: str
    answer_external_id: str
    query: str  # the normalised text
    clicks: int
    impressions: int
    best_rank: int | None
    coec: float
    coec_stars: int | None
    attractiveness: float | None
    seen: int
    pbm_stars: int | None
    dbn_attractiveness: float | None = None
    dbn_satisfaction: float | None = None
    dbn_reads: int = 0
    dbn_stars: int | None = None

    def stars(self, method: str) -> int | None:
        return {COEC_METHOD: self.coec_stars, PBM_METHOD: self.pbm_stars, DBN_METHOD: self.dbn_stars}[method]

    def value(self, method: str) -> float | None:
        return {COEC_METHOD: self.coec, PBM_METHOD: self.attractiveness, DBN_METHOD: self.dbn_attractiveness}[
            method
        ]

    def as_json(self) -> dict:
        return {
            "question": self.question_external_id,
            "answer": self.answer_external_id,
            "query": self.query,
            "clicks": self.clicks,
            "impressions": self.impressions,
            "best_rank": self.best_rank,
            "coec": self.coec,
            "coec_stars": self.coec_stars,
            "attractiveness": self.attractiveness,
            "pbm_impressions": self.seen,
            "pbm_stars": self.pbm_stars,
            "dbn_attractiveness": self.dbn_attractiveness,
            "dbn_satisfaction": self.dbn_satisfaction,
            "dbn_reads": self.dbn_reads,
            "dbn_stars": self.dbn_stars,
        }


@dataclass(frozen=True)
class ImplicitJudgments:
    parameters: ClickParameters
    judgments: list[ImplicitJudgment]
    events: int  # events kept (ordinal ≤ max_rank, in the date range)
    queries: int  # query records of the application in the date range
    matched_queries: int  # of them, with a text a question has
    unmatched_texts: int  # distinct normalised texts no question has
    unmatched: list[tuple[str, int]] = field(default_factory=list)  # the most frequent, with counts
    unknown_answer_pairs: int = 0  # matched text, object_id not an answer of the collection
    expected_ctr: list[tuple[int, float]] = field(default_factory=list)  # (rank, ctr)
    examination: list[tuple[int, float]] = field(default_factory=list)  # (rank, θ), θ = 1 at the top
    pbm_iterations: int = 0
    pbm_converged: bool = True
    dbn_iterations: int = 0
    dbn_converged: bool = True
    dbn_sessions: int = 0
    coec_thresholds: tuple[float, float, float] = COEC_THRESHOLDS
    attractiveness_thresholds: tuple[float, float, float] = ATTRACTIVENESS_THRESHOLDS

    def thresholds(self, method: str) -> tuple[float, float, float]:
        """The star thresholds of a click method's figure."""
        return self.coec_thresholds if method == COEC_METHOD else self.attractiveness_thresholds

    def of_question(self, question_id: int) -> list[ImplicitJudgment]:
        return [j for j in self.judgments if j.question_id == question_id]

    def as_json(self, collection: Collection, method: str = DEFAULT_METHOD) -> dict:
        """Every figure of every pair, and ``method``'s stars and figure as each pair's ``stars`` and
        ``value``."""
        return {
            "parameters": self.parameters.as_json(collection),
            "model": method,
            "events": self.events,
            "queries": self.queries,
            "matched_queries": self.matched_queries,
            "unmatched_texts": self.unmatched_texts,
            "unmatched": [{"query": text, "count": count} for text, count in self.unmatched],
            "unknown_answer_pairs": self.unknown_answer_pairs,
            "expected_ctr": [{"rank": r, "ctr": ctr} for r, ctr in self.expected_ctr],
            "examination": [{"rank": r, "examination": theta} for r, theta in self.examination],
            "pbm_iterations": self.pbm_iterations,
            "pbm_converged": self.pbm_converged,
            "dbn_iterations": self.dbn_iterations,
            "dbn_converged": self.dbn_converged,
            "dbn_sessions": self.dbn_sessions,
            "stars": {method: star_mapping(self.thresholds(method)) for method in METHODS},
            "judgments": [
                j.as_json() | {"stars": j.stars(method), "value": j.value(method)} for j in self.judgments
            ],
        }


def star_mapping(thresholds: tuple[float, float, float]) -> list[dict]:
    """The mapping as rows: stars s for lower ≤ value < upper (None: unbounded)."""
    bounds: list[float | None] = [None, *thresholds, None]
    return [{"stars": s, "from": bounds[s], "below": bounds[s + 1]} for s in range(4)]


def _in_range(queryset: QuerySet, parameters: ClickParameters) -> QuerySet:
    if parameters.start_date:
        start = dt.datetime.combine(parameters.start_date, dt.time(), tzinfo=dt.UTC)
        queryset = queryset.filter(timestamp__gte=start)
    if parameters.end_date:
        end = dt.datetime.combine(parameters.end_date + dt.timedelta(days=1), dt.time(), tzinfo=dt.UTC)
        queryset = queryset.filter(timestamp__lt=end)
    return queryset


def _events(application: str, parameters: ClickParameters) -> list[tuple[str, int, str | None, str, str]]:
    """(action, ordinal, user_query or None, object_id, query_id) of the kept events."""
    queries = UbiQuery.objects.filter(query_id=OuterRef("query_id"))
    events = UbiEvent.objects.filter(ordinal__isnull=False, ordinal__lte=parameters.max_rank).filter(
        Exists(queries.filter(application=application)) | (Q(application=application) & ~Exists(queries))
    )
    events = _in_range(events, parameters).annotate(user_query=Subquery(queries.values("user_query")[:1]))
    return list(
        events.order_by().values_list("action_name", "ordinal", "user_query", "object_id", "query_id")
    )


def implicit_judgments(
    *, collection: Collection, parameters: ClickParameters | None = None
) -> ImplicitJudgments:
    """Every matched pair's COEC, DBN and PBM figures with their stars, and what did not match."""
    parameters = parameters or ClickParameters()
    application = parameters.application or collection.slug
    questions: dict[str, list[tuple[int, str]]] = defaultdict(list)
    for pk, external_id, text in (
        Question.objects.filter(collection=collection).order_by("pk").values_list("pk", "external_id", "text")
    ):
        questions[normalise(text)].append((pk, external_id))
    texts = Counter(
        normalise(text)
        for text in logged_queries(
            application=application, start_date=parameters.start_date, end_date=parameters.end_date
        )
        .order_by()
        .values_list("user_query", flat=True)
        .iterator(chunk_size=5000)
    )
    unmatched = Counter({text: n for text, n in texts.items() if text not in questions})
    rows = _events(application, parameters)
    action = [a for a, _, _, _, _ in rows]
    ordinal = np.array([o for _, o, _, _, _ in rows], dtype=np.int64)
    spelt = {q: normalise(q) for q in {q for _, _, q, _, _ in rows if q is not None}}
    query = [None if q is None else spelt[q] for _, _, q, _, _ in rows]
    object_id = [o for _, _, _, o, _ in rows]
    query_id = [s for _, _, _, _, s in rows]
    result = coec(
        action=action,
        ordinal=ordinal,
        user_query=np.array(query, dtype=object),
        object_id=np.array(object_id, dtype=object),
        max_rank=parameters.max_rank,
        first_ordinal=1,
    )
    model = _position_based_model(result, action, ordinal, query, object_id)
    attractiveness = model.attractiveness if model else np.full(result.value.size, np.nan)
    seen = model.impressions if model else np.zeros(result.value.size, dtype=np.int64)
    pbm_stars = to_stars(attractiveness, ATTRACTIVENESS_THRESHOLDS)
    cascade = _cascade_model(result, action, ordinal, query, object_id, query_id)
    nothing = np.full(result.value.size, np.nan)
    dbn_a = cascade.attractiveness if cascade else nothing
    dbn_s = cascade.satisfaction if cascade else nothing
    dbn_seen = cascade.reads if cascade else np.zeros(result.value.size, dtype=np.int64)
    dbn_stars = to_stars(dbn_a, ATTRACTIVENESS_THRESHOLDS)
    coec_stars = to_stars(result.value, COEC_THRESHOLDS)
    answers = dict(
        Answer.objects.filter(collection=collection, external_id__in=set(result.object_id.tolist()))
        .order_by()
        .values_list("external_id", "pk")
    )
    judgments, unknown = [], 0
    columns = zip(
        result.user_query.tolist(),
        result.object_id.tolist(),
        result.clicks.tolist(),
        result.impressions.tolist(),
        result.best_rank.tolist(),
        result.value.tolist(),
        coec_stars.tolist(),
        attractiveness.tolist(),
        seen.tolist(),
        pbm_stars.tolist(),
        dbn_a.tolist(),
        dbn_s.tolist(),
        dbn_seen.tolist(),
        dbn_stars.tolist(),
        strict=True,
    )
    for (
        text,
        object_,
        clicks,
        impressions,
        best,
        value,
        stars,
        gamma,
        shown,
        pbm,
        a,
        s,
        reads,
        dbn,
    ) in columns:
        if text not in questions:
            continue
        if object_ not in answers:
            unknown += 1
            continue
        for question_id, question_external_id in questions[text]:
            judgments.append(
                ImplicitJudgment(
                    question_id=question_id,
                    answer_id=answers[object_],
                    question_external_id=question_external_id,
                    answer_external_id=object_,
                    query=text,
                    clicks=clicks,
                    impressions=impressions,
                    best_rank=None if best == NO_RANK else best,
                    coec=value,
                    coec_stars=stars if impressions > 0 else None,
                    attractiveness=None if math.isnan(gamma) else gamma,
                    seen=shown,
                    pbm_stars=None if pbm == NO_STARS else pbm,
                    dbn_attractiveness=None if math.isnan(a) else a,
                    dbn_satisfaction=None if math.isnan(s) else s,
                    dbn_reads=reads,
                    dbn_stars=None if dbn == NO_STARS else dbn,
                )
            )
    judgments.sort(key=lambda j: (j.question_id, -(j.coec), j.answer_id))
    return ImplicitJudgments(
        parameters=parameters,
        judgments=judgments,
        events=len(rows),
        queries=sum(texts.values()),
        matched_queries=sum(n for text, n in texts.items() if text in questions),
        unmatched_texts=len(unmatched),
        unmatched=sorted(unmatched.items(), key=lambda item: (-item[1], item[0]))[:UNMATCHED_SHOWN],
        unknown_answer_pairs=unknown,
        expected_ctr=[(result.first_ordinal + r, float(c)) for r, c in enumerate(result.expected_ctr)],
        examination=[(int(r), float(t)) for r, t in zip(model.ranks, model.examination, strict=True)]
        if model
        else [],
        pbm_iterations=model.iterations if model else 0,
        pbm_converged=bool(model.converged) if model else True,
        dbn_iterations=cascade.iterations if cascade else 0,
        dbn_converged=bool(cascade.converged) if cascade else True,
        dbn_sessions=cascade.sessions if cascade else 0,
    )


# Cached implicit judgments live this long; they are keyed by the log's and the collection's state, so a
# new event, query, question or answer computes them again.
CLICKS_CACHE_SECONDS = 10 * 60


def implicit_judgments_cached(
    *, collection: Collection, parameters: ClickParameters | None = None
) -> ImplicitJudgments:
    """``implicit_judgments``, cached (``CLICKS_CACHE_SECONDS``) under the newest event and query ids and
    the collection's change markers: a page view then costs those three indexed reads instead of the
    whole log (about 1 s of CPU a 100,000 events: bench/bench_clicks.py)."""
    parameters = parameters or ClickParameters()
    state = (
        UbiEvent.objects.aggregate(last=Max("pk"))["last"],
        UbiQuery.objects.aggregate(last=Max("pk"))["last"],
        # The collection's change markers (corpus.services.collection_changed), not a COUNT and MAX over
        # its answers: a page view must not cost what grows with the collection (issue 37).
        Collection.objects.filter(pk=collection.pk)
        .values_list("questions_version", "answers_version")
        .first(),
    )
    key = (
        "clicks:"
        + hashlib.sha1(repr((collection.pk, collection.slug, parameters, state)).encode()).hexdigest()
    )
    judgments = cache.get(key)
    if judgments is None:
        judgments = implicit_judgments(collection=collection, parameters=parameters)
        cache.set(key, judgments, CLICKS_CACHE_SECONDS)
    return judgments


def _position_based_model(
    result: Coec, action: list[str], ordinal: NDArray[np.int64], query: list[str | None], object_id: list[str]
) -> PositionBasedModel | None:
    """The PBM fitted to (ordinal, pair) rows of clicks and impressions (n = max of the two); None when
    no pair has either. Each click or impression finds its pair among the COEC rows by a dict of them;
    the rows are counted with ``np.unique`` and ``np.bincount``."""
    kind = np.char.lower(np.asarray(action, dtype=str)) if action else np.empty(0, dtype=str)
    known = np.array([q is not None for q in query], dtype=bool)
    counted = known & ((kind == "click") | (kind == "impression"))
    if not counted.any():
        return None
    index = {
        pair: i
        for i, pair in enumerate(zip(result.user_query.tolist(), result.object_id.tolist(), strict=True))
    }
    texts = np.asarray(query, dtype=object)[counted].astype(str).tolist()
    objects = np.asarray(object_id, dtype=object)[counted].astype(str).tolist()
    pair = np.fromiter((index[p] for p in zip(texts, objects, strict=True)), dtype=np.int64, count=len(texts))
    n_pairs = result.value.size
    is_click = kind[counted] == "click"
    codes, row = np.unique(ordinal[counted] * n_pairs + pair, return_inverse=True)
    clicks = np.bincount(row, weights=is_click, minlength=codes.size).astype(np.int64)
    shown = np.bincount(row, weights=~is_click, minlength=codes.size).astype(np.int64)
    return fit_position_based_model(
        codes // n_pairs, codes % n_pairs, clicks, np.maximum(shown, clicks), n_pairs=n_pairs
    )


def _cascade_model(
    result: Coec,
    action: list[str],
    ordinal: NDArray[np.int64],
    query: list[str | None],
    object_id: list[str],
    query_id: list[str],
) -> CascadeModel | None:
    """The DBN fitted to the sessions of the log: one per query id, a row per (ordinal, pair) with an
    impression or a click event, clicked when a click event is there; None when no pair has either. Rows
    are made unique with ``np.unique`` over (session, ordinal, pair) codes."""
    kind = np.char.lower(np.asarray(action, dtype=str)) if action else np.empty(0, dtype=str)
    known = np.array([q is not None for q in query], dtype=bool)
    counted = known & ((kind == "click") | (kind == "impression"))
    if not counted.any():
        return None
    index = {
        pair: i
        for i, pair in enumerate(zip(result.user_query.tolist(), result.object_id.tolist(), strict=True))
    }
    texts = np.asarray(query, dtype=object)[counted].astype(str).tolist()
    objects = np.asarray(object_id, dtype=object)[counted].astype(str).tolist()
    pair = np.fromiter((index[p] for p in zip(texts, objects, strict=True)), dtype=np.int64, count=len(texts))
    _, session = np.unique(np.asarray(query_id, dtype=str)[counted], return_inverse=True)
    n_pairs, ranks = result.value.size, int(ordinal[counted].max()) + 1
    codes, row = np.unique((session.ravel() * ranks + ordinal[counted]) * n_pairs + pair, return_inverse=True)
    clicked = np.bincount(row.ravel(), weights=kind[counted] == "click", minlength=codes.size) > 0
    return fit_dbn(
        codes // n_pairs // ranks, codes // n_pairs % ranks, codes % n_pairs, clicked, n_pairs=n_pairs
    )
