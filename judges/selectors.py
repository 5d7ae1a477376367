"""Reads for judges: which pairs a run judges, people's grades, and how far a judge agrees with people."""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
from django.core.exceptions import ValidationError
from django.db.models import QuerySet

from corpus.models import Answer, Collection, Question
from evaluation.metrics.ranking import mean_ignoring_undefined
from evaluation.models import EvaluationRun, QuestionResult
from evaluation.selectors.clicks import METHODS, implicit_judgments
from evaluation.services import score_rankings
from judges.models import Judge, JudgeKind, Judging, Selection
from judges.stats.confusion import confusion_matrix
from judges.stats.kappa import weighted_kappa
from judges.stats.kendall import kendall_tau_b
from raters.next_task.budget import is_overlap_question
from raters.next_task.picking import queue_pairs
from raters.next_task.table import candidate_table, latest_run
from ratings.agreement import krippendorff_alpha
from ratings.models import JudgeAccount, Label, Rating
from ratings.services import aggregate_stars

Pair = tuple[int, int]
DISAGREEMENTS_SHOWN = 20
LEAST_CERTAIN_SHOWN = 20


def human_grades(*, collection: Collection, split: str = "") -> dict[Pair, int]:
    """{(question id, answer id): people's grade} (the label rule over people's ratings only, no judges)."""
    judges = JudgeAccount.objects.values("user_id")
    ratings = Rating.objects.filter(question__collection=collection).exclude(rater_id__in=judges)
    if split:
        ratings = ratings.filter(question__split=split)
    stars: dict[Pair, list[int]] = defaultdict(list)
    for q, a, s in ratings.values_list("question_id", "answer_id", "stars").order_by(
        "question_id", "answer_id"
    ):
        stars[(q, a)].append(s)
    return {pair: aggregate_stars(values)[0] for pair, values in stars.items()}


@dataclass(frozen=True)
class HumanPair:
    question_id: int
    answer_id: int
    question: str
    answer_external_id: str
    answer: str
    stars: int


def human_labelled_pairs(
    *, collection: Collection, split: str = "", limit: int | None = None
) -> list[HumanPair]:
    """The pairs people rated, with their texts and people's grade, lowest pair ids first."""
    grades = human_grades(collection=collection, split=split)
    pairs = sorted(grades)[:limit] if limit is not None else sorted(grades)
    questions = dict(Question.objects.filter(pk__in={q for q, _ in pairs}).values_list("pk", "text"))
    answers = {
        pk: (external_id, f"{title}\n{body}".strip())
        for pk, external_id, title, body in Answer.objects.filter(pk__in={a for _, a in pairs}).values_list(
            "pk", "external_id", "title", "body"
        )
    }
    return [HumanPair(q, a, questions[q], answers[a][0], answers[a][1], grades[(q, a)]) for q, a in pairs]


def _judged(judge: Judge) -> set[Pair]:
    return set(Rating.objects.filter(rater_id=judge.account.user_id).values_list("question_id", "answer_id"))


def select_pairs(*, judge: Judge, selection: str, limit: int, question_ids: list[str]) -> list[Pair]:
    """The pairs a new run judges, at most ``limit``, none the judge has rated already.

    - queue: the rating queue's next pairs for the judge's account (its order and reasons);
    - test-top: the unlabelled answers in the test questions' top k of the latest evaluation;
    - questions: the current candidates (default ranker's top k) and the labelled answers of the
      questions with these ids;
    - overlap: pairs people rated in the overlap sample, to calibrate the judge against them;
    - clicked: the pairs with click stars in the production log (by the judge's click model for a clicks
      judge, by either for another); a clicks judge rates only these, and every run rates them all
      again, since the log grows.
    """
    collection = judge.collection
    done = _judged(judge) if judge.kind != JudgeKind.CLICKS else set()
    if judge.kind == JudgeKind.CLICKS and selection != Selection.CLICKED:
        raise ValidationError(
            {"selection": "A clicks judge rates the pairs with click evidence: choose “clicked”."}
        )
    if selection == Selection.CLICKED:
        methods = [judge.model] if judge.kind == JudgeKind.CLICKS else list(METHODS)
        pairs = [
            (j.question_id, j.answer_id)
            for j in implicit_judgments(collection=collection).judgments
            if any(j.stars(m) is not None for m in methods)
        ]
    elif selection == Selection.QUEUE:
        pairs = queue_pairs(collection=collection, rater=judge.account.user, limit=limit + len(done))
    elif selection == Selection.TEST_TOP:
        run = latest_run(collection=collection)
        if run is None:
            raise ValidationError(
                {
                    "selection": "No evaluation yet, so the test questions' top 10 is not known: run one "
                    "first (Run evaluation on the collection's dashboard)."
                }
            )
        ids = dict(Answer.objects.filter(collection=collection).values_list("external_id", "id"))
        labelled = set(
            Label.objects.filter(question__collection=collection).values_list("question_id", "answer_id")
        )
        pairs = []
        for q, ranked in (
            QuestionResult.objects.filter(run=run, error="")
            .order_by("question_id")
            .values_list("question_id", "ranked_answer_ids")
        ):
            for external_id in (ranked or [])[: run.ndcg_k]:
                a = ids.get(external_id)
                if a is not None and (q, a) not in labelled:
                    pairs.append((q, a))
    elif selection == Selection.QUESTIONS:
        wanted = [str(x).strip() for x in question_ids if str(x).strip()]
        if not wanted:
            raise ValidationError({"question_ids": "Name at least one question id."})
        found = dict(
            Question.objects.filter(collection=collection, external_id__in=wanted)
            .order_by()  # by the unique index: the default order makes SQLite walk the whole collection
            .values_list("external_id", "id")
        )
        missing = [x for x in wanted if x not in found]
        if missing:
            raise ValidationError(
                {"question_ids": f"No question {', '.join(repr(m) for m in missing[:5])} in this collection."}
            )
        table = candidate_table(collection=collection)
        labelled_answers: dict[int, list[int]] = defaultdict(list)
        for q, a in (
            Label.objects.filter(question_id__in=found.values())
            .order_by("answer_id")
            .values_list("question_id", "answer_id")
        ):
            labelled_answers[q].append(a)
        pairs = [
            (found[x], a) for x in wanted for a in [*table.get(found[x], []), *labelled_answers[found[x]]]
        ]
    else:
        external = dict(Question.objects.filter(collection=collection).values_list("id", "external_id"))
        pairs = [
            pair
            for pair in sorted(human_grades(collection=collection))
            if is_overlap_question(
                collection_slug=collection.slug,
                external_id=external[pair[0]],
                fraction=collection.overlap_fraction,
            )
        ]
    result = list(dict.fromkeys(p for p in pairs if p not in done))
    return result[:limit]


def judges_of(*, collection: Collection) -> QuerySet[Judge]:
    return (
        Judge.objects.filter(collection=collection)
        .select_related("account", "collection")
        .order_by("name", "id")
    )


def judgings_of(*, judge: Judge) -> QuerySet[Judging]:
    return Judging.objects.filter(judge=judge).order_by("-created_at", "-id")


def latest_judging(*, judge: Judge) -> Judging | None:
    return Judging.objects.filter(judge=judge).order_by("-created_at", "-id").first()


# --- agreement ------------------------------------------------------------------------------------------


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


def judge_grades(*, judge: Judge) -> dict[Pair, int]:
    return {
        (q, a): s
        for q, a, s in Rating.objects.filter(rater_id=judge.account.user_id).values_list(
            "question_id", "answer_id", "stars"
        )
    }


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
