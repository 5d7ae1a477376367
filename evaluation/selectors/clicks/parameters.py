"""The parameters of implicit judgments, the methods and their measures, and what one pair's and a
collection's judgments hold."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from corpus.models import Collection
from evaluation.measures import CASCADE_ATTRACTIVENESS, CLICK_ATTRACTIVENESS, COEC
from evaluation.online import (
    ATTRACTIVENESS_THRESHOLDS,
    COEC_THRESHOLDS,
)
from ubi.production_questions import normalise_query

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
