"""How far a judge agrees with people: κ, α, the confusion, leniency, the biggest disagreements, its least
certain grades, and the latest runs' headline scored with people's labels and with the judge's."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from corpus.models import Answer, Collection, Question
from evaluation.metrics.ranking import mean_ignoring_undefined
from evaluation.models import EvaluationRun, QuestionResult
from evaluation.services import score_rankings
from judges.models import Judge
from judges.selectors.grades import Pair, human_grades, judge_grades
from judges.stats.confusion import confusion_matrix
from judges.stats.kappa import weighted_kappa
from judges.stats.kendall import kendall_tau_b
from ratings.agreement import krippendorff_alpha
from ratings.models import Rating

DISAGREEMENTS_SHOWN = 20
LEAST_CERTAIN_SHOWN = 20


@dataclass(frozen=True)
class UncertainJudgment:
    """One of the judge's least certain judgments, and people's grade of the pair if they rated it."""

    question: Question
    answer: Answer
    stars: int
    certainty: float
    people: int | None


def least_certain(
    *, judge: Judge, humans: dict[Pair, int] | None = None, limit: int = LEAST_CERTAIN_SHOWN
) -> list[UncertainJudgment]:
    """The judge's ``limit`` judgments with the smallest confidence (``judges.confidence``, stored as
    ``Rating.certainty``; then pair ids), those without one left out. The pairs no person rated among them
    are what "Review the judge" in the rating queue offers people
    (``raters.next_task.judge_reads.judge_uncertain_pairs``)."""
    humans = human_grades(collection=judge.collection) if humans is None else humans
    rows = list(
        Rating.objects.filter(rater_id=judge.account.user_id, certainty__isnull=False)
        .order_by("certainty", "question_id", "answer_id")
        .values_list("question_id", "answer_id", "stars", "certainty")[:limit]
    )
    questions = Question.objects.in_bulk([q for q, *_ in rows])
    answers = Answer.objects.in_bulk([a for _, a, *_ in rows])
    return [
        UncertainJudgment(questions[q], answers[a], stars, float(certainty or 0.0), humans.get((q, a)))
        for q, a, stars, certainty in rows  # certainty is never null here (filtered above)
    ]


@dataclass(frozen=True)
class SystemScore:
    """One run's headline with people's labels and with the judge's."""

    run: EvaluationRun
    human: float | None
    judge_same_pairs: float | None
    judge_fills: float | None

    @property
    def difference(self) -> float | None:
        if self.human is None or self.judge_same_pairs is None:
            return None
        return self.judge_same_pairs - self.human


@dataclass(frozen=True)
class Agreement:
    """How a judge agrees with people on the pairs both rated (formulas in ``judges.stats``)."""

    judge: Judge
    pairs: int
    kappa: float | None
    alpha: float | None
    confusion: list[list[int]]
    leniency: float | None  # mean of (judge's stars − people's grade)
    exact: float | None  # share of pairs with the same grade
    systems: list[SystemScore] = field(default_factory=list)
    tau: float | None = None
    # The biggest disagreements: (question, answer, people's grade, judge's stars), gap first.
    disagreements: list[tuple[Question, Answer, int, int]] = field(default_factory=list)
    # The judge's least certain judgments (``least_certain``).
    least_certain: list[UncertainJudgment] = field(default_factory=list)

    def as_json(self) -> dict:
        return {
            "judge": self.judge.pk,
            "pairs": self.pairs,
            "weighted_kappa": _r(self.kappa),
            "krippendorff_alpha": _r(self.alpha),
            "confusion": self.confusion,
            "leniency": _r(self.leniency),
            "exact_agreement": _r(self.exact),
            "kendall_tau": _r(self.tau),
            "systems": [
                {
                    "run": s.run.pk,
                    "ranker": s.run.ranker.name,
                    "version": s.run.ranker_version.label if s.run.ranker_version else None,
                    "ndcg_human": _r(s.human),
                    "ndcg_judge_same_pairs": _r(s.judge_same_pairs),
                    "ndcg_judge_fills_unrated": _r(s.judge_fills),
                    "difference": _r(s.difference),
                }
                for s in self.systems
            ],
            "least_certain": [
                {
                    "question": u.question.external_id,
                    "answer": u.answer.external_id,
                    "stars": u.stars,
                    "certainty": u.certainty,
                    "people": u.people,
                }
                for u in self.least_certain
            ],
        }


def _r(value: float | None) -> float | None:
    return None if value is None or math.isnan(value) else round(value, 3)


def agreement(*, judge: Judge) -> Agreement:
    """κ (quadratic weights), α (ordinal), the 4×4 confusion (rows: people, columns: the judge), leniency,
    and the latest runs' headline NDCG@k with people's labels vs the judge's (and Kendall's τ of the two
    orderings of those runs when there are two or more)."""
    humans = human_grades(collection=judge.collection)
    mine = judge_grades(judge=judge)
    both = sorted(humans.keys() & mine.keys())
    h = np.array([humans[p] for p in both], dtype=np.int64)
    j = np.array([mine[p] for p in both], dtype=np.int64)
    kappa = alpha = leniency = exact = None
    if both:
        try:
            kappa = weighted_kappa(h, j)
        except ValueError:
            kappa = None
        alpha = krippendorff_alpha([[int(x), int(y)] for x, y in zip(h, j, strict=True)], level="ordinal")
        leniency = float(np.mean(j - h))
        exact = float(np.mean(j == h))
    confusion = confusion_matrix(h, j).tolist()
    systems = system_scores(collection=judge.collection, humans=humans, judge=mine)
    tau = None
    scored = [s for s in systems if s.human is not None and s.judge_same_pairs is not None]
    if len(scored) >= 2:
        try:
            tau = kendall_tau_b(
                np.array([s.human for s in scored], dtype=np.float64),
                np.array([s.judge_same_pairs for s in scored], dtype=np.float64),
            )
        except ValueError:
            tau = None
    worst = sorted((p for p in both if humans[p] != mine[p]), key=lambda p: (-abs(humans[p] - mine[p]), p))
    worst = worst[:DISAGREEMENTS_SHOWN]
    questions = Question.objects.in_bulk([q for q, _ in worst])
    answers = Answer.objects.in_bulk([a for _, a in worst])
    disagreements = [(questions[q], answers[a], humans[(q, a)], mine[(q, a)]) for q, a in worst]
    return Agreement(
        judge,
        len(both),
        kappa,
        alpha,
        confusion,
        leniency,
        exact,
        systems,
        tau,
        disagreements,
        least_certain(judge=judge, humans=humans),
    )


def latest_runs(*, collection: Collection) -> list[EvaluationRun]:
    """The latest successful run of each ranker version (a ranker without versions: of the ranker)."""
    runs = (
        EvaluationRun.objects.succeeded()
        .filter(collection=collection)
        .select_related("ranker", "ranker_version")
        .order_by("-finished_at", "-id")
    )
    seen: dict[tuple[int, int | None], EvaluationRun] = {}
    for run in runs:
        seen.setdefault((run.ranker_id, run.ranker_version_id), run)
    return sorted(seen.values(), key=lambda r: r.pk)


def system_scores(
    *, collection: Collection, humans: dict[Pair, int], judge: dict[Pair, int]
) -> list[SystemScore]:
    """Each latest run's stored rankings scored (``evaluation.services.score_rankings``) three ways:
    people's labels; the judge's grade instead on the pairs both rated; people's labels plus the judge's
    where no person rated. The headline is the mean NDCG@k over questions with a known good answer."""
    runs = latest_runs(collection=collection)
    if not runs:
        return []
    external = dict(Answer.objects.filter(collection=collection).values_list("id", "external_id"))
    by_question: dict[int, dict[str, dict[str, int]]] = defaultdict(lambda: {"h": {}, "s": {}, "f": {}})
    for (q, a), stars in humans.items():
        by_question[q]["h"][external[a]] = stars
        by_question[q]["s"][external[a]] = judge.get((q, a), stars)
        by_question[q]["f"][external[a]] = stars
    for (q, a), stars in judge.items():
        if (q, a) not in humans and a in external:
            by_question[q]["f"][external[a]] = stars
    # With no pair rated by both, "the judge's grade on the same pairs" would repeat people's headline
    # and read as a measured +0.000: it is None instead.
    shared = any(pair in humans for pair in judge)
    result = []
    for run in runs:
        rows = list(
            QuestionResult.objects.filter(run=run, error="")
            .order_by("question_id")
            .values_list("question_id", "ranked_answer_ids")
        )
        if not rows:
            continue
        rankings = [ranked for _, ranked in rows]

        labels = {key: [by_question[q][key] for q, _ in rows] for key in ("h", "s", "f")}
        result.append(
            SystemScore(
                run,
                _headline(run, rankings, labels["h"]),
                _headline(run, rankings, labels["s"]) if shared else None,
                _headline(run, rankings, labels["f"]),
            )
        )
    return result


def _headline(run: EvaluationRun, rankings: list[list[str]], labels: list[dict[str, int]]) -> float | None:
    """Mean NDCG@k over the questions with a known good answer (None when there is none)."""
    scored = score_rankings(run=run, rankings=rankings, labels=labels)
    mean = mean_ignoring_undefined(scored.ndcg).mean
    return None if math.isnan(mean) else float(mean)
