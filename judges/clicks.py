"""Clicks beside ratings: how the stars of the implicit judgments (``evaluation.selectors.clicks``: the
cascade model, COEC and the position-based model) agree with people's grades and with each judge's, on the
pairs that have both.

Per click method (DBN, COEC, PBM) and grader (people: the label rule over people's ratings only, as
``human_grades``; each judge with ratings: its own stars), over the pairs with click stars and a grade:
the count, the 4×4 confusion (rows: the grader's stars, columns: the clicks'), weighted κ (quadratic),
the exact agreement, Kendall τ-b of the grades against the click figure itself (COEC, or an attractiveness),
and the pairs 2 or more stars apart; the pairs where people and the default method (``DEFAULT_METHOD``)
are 2 or more stars apart are listed. Formulas in ``judges.stats``; names in ``evaluation.measures``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from corpus.models import Collection
from evaluation.selectors.clicks import (
    DEFAULT_METHOD,
    MEASURE_OF,
    METHODS,
    ClickParameters,
    ImplicitJudgment,
    ImplicitJudgments,
    implicit_judgments_cached,
)
from judges.selectors import human_grades, judge_grades, judges_of
from judges.stats.confusion import confusion_matrix
from judges.stats.kappa import weighted_kappa
from judges.stats.kendall import kendall_tau_b_items

PEOPLE = "people"
FAR = 2  # stars apart: a disagreement worth a person's look
FAR_SHOWN = 20


@dataclass(frozen=True)
class ClicksComparison:
    method: str
    grader: str  # PEOPLE or a judge's name
    pairs: int
    confusion: list[list[int]]
    kappa: float | None
    exact: float | None
    tau: float | None
    far: int

    @property
    def measure(self) -> str:
        """The key of the figure's measure (``evaluation.measures``)."""
        return MEASURE_OF[self.method]

    @property
    def confusion_rows(self) -> list[tuple[int, list[int]]]:
        return list(enumerate(self.confusion))

    def as_json(self) -> dict:
        return {
            "method": self.method,
            "grader": self.grader,
            "pairs": self.pairs,
            "confusion": self.confusion,
            "weighted_kappa": self.kappa,
            "exact_agreement": self.exact,
            "kendall_tau": self.tau,
            "two_or_more_apart": self.far,
        }


@dataclass(frozen=True)
class FarPair:
    judgment: ImplicitJudgment
    people: int


@dataclass(frozen=True)
class ClicksBesideRatings:
    judgments: ImplicitJudgments
    comparisons: list[ClicksComparison]
    far: list[FarPair] = field(
        default_factory=list
    )  # people vs the default's stars, 2+ apart, largest gap first
    method: str = DEFAULT_METHOD  # whose stars ``far`` compares

    def as_json(self, collection: Collection) -> dict:
        return {
            "parameters": self.judgments.parameters.as_json(collection),
            "comparisons": [c.as_json() for c in self.comparisons],
            "two_or_more_apart": [
                {
                    "question": f.judgment.question_external_id,
                    "answer": f.judgment.answer_external_id,
                    "people": f.people,
                    "method": self.method,
                    "stars": f.judgment.stars(self.method),
                    "dbn_stars": f.judgment.dbn_stars,
                    "coec_stars": f.judgment.coec_stars,
                    "pbm_stars": f.judgment.pbm_stars,
                }
                for f in self.far
            ],
        }


def compare(
    judgments: list[ImplicitJudgment], grades: dict[tuple[int, int], int], *, method: str, grader: str
) -> ClicksComparison:
    """The agreement of one click method's stars with one grader's, on the pairs that have both."""
    both = [
        (grades[(j.question_id, j.answer_id)], j.stars(method), j.value(method))
        for j in judgments
        if j.stars(method) is not None and (j.question_id, j.answer_id) in grades
    ]
    graded = np.array([g for g, _, _ in both], dtype=np.int64)
    clicked = np.array([s for _, s, _ in both], dtype=np.int64)
    values = np.array([v for _, _, v in both], dtype=np.float64)
    kappa = exact = tau = None
    if both:
        try:
            kappa = weighted_kappa(graded, clicked)
        except ValueError:
            kappa = None  # one grade for everything
        exact = float(np.mean(graded == clicked))
        tau = kendall_tau_b_items(graded, values)
    return ClicksComparison(
        method=method,
        grader=grader,
        pairs=len(both),
        confusion=confusion_matrix(graded, clicked).tolist(),
        kappa=kappa,
        exact=exact,
        tau=tau,
        far=int(np.count_nonzero(np.abs(graded - clicked) >= FAR)),
    )


def clicks_beside_ratings(
    *, collection: Collection, parameters: ClickParameters | None = None
) -> ClicksBesideRatings:
    """Each click method against people, then against each judge that has rated (in name order)."""
    judgments = implicit_judgments_cached(collection=collection, parameters=parameters)
    people = human_grades(collection=collection)
    graders = [(PEOPLE, people)]
    for judge in judges_of(collection=collection):
        grades = judge_grades(judge=judge)
        if grades:
            graders.append((judge.name, grades))
    comparisons = [
        compare(judgments.judgments, grades, method=method, grader=grader)
        for grader, grades in graders
        for method in METHODS
    ]
    far = [
        FarPair(j, people[(j.question_id, j.answer_id)])
        for j in judgments.judgments
        if (stars := j.stars(DEFAULT_METHOD)) is not None
        and (j.question_id, j.answer_id) in people
        and abs(people[(j.question_id, j.answer_id)] - stars) >= FAR
    ]
    far.sort(key=lambda f: (-abs(f.people - (f.judgment.stars(DEFAULT_METHOD) or 0)), f.judgment.question_id))
    return ClicksBesideRatings(judgments, comparisons, far[:FAR_SHOWN], DEFAULT_METHOD)
