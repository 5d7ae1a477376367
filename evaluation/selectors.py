"""Reads of evaluation runs for the dashboard, the drilldown and the API.

Every function runs a fixed number of queries whatever the number of runs, questions or ratings
(the dashboard tests assert it), so pages stay fast with a long history.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.contrib.auth.models import AbstractBaseUser
from django.core.cache import cache
from django.db.models import Case, Count, F, Max, Q, QuerySet, Value, When

from corpus.models import Collection, Split
from evaluation.exports import ResultRow
from evaluation.metrics.pairwise import compare_pairs
from evaluation.metrics.stats import compare_runs
from evaluation.models import EvaluationRun, QuestionResult, RunStatus
from evaluation.services import STATS_SEED, score_rankings
from rankers.models import ChampionChange, Ranker
from ratings.models import Label, Rating
from ratings.selectors import labels_by_question

ACTIVE = [RunStatus.PENDING, RunStatus.RUNNING]


def runs_for_ranker(*, ranker: Ranker) -> QuerySet[EvaluationRun]:
    """Every run of the ranker, newest first (failed ones included: the user must see them)."""
    return (
        EvaluationRun.objects.filter(ranker=ranker)
        .select_related("ranker", "ranker_version", "collection", "created_by")
        .order_by("-created_at", "-id")
    )


def run_detail(*, run_id: int) -> EvaluationRun | None:
    """One run with its ranker, version, collection and previous run, or None."""
    return (
        EvaluationRun.objects.select_related(
            "ranker", "ranker_version", "collection", "previous_run", "created_by"
        )
        .filter(pk=run_id)
        .first()
    )


def question_results(*, run: EvaluationRun) -> QuerySet[QuestionResult]:
    """The run's per-question results, worst NDCG first; questions without a defined NDCG come last."""
    return (
        QuestionResult.objects.filter(run=run)
        .select_related("question")
        .order_by(F("ndcg").asc(nulls_last=True), "question_id")
    )


def run_export_rows(*, run: EvaluationRun) -> list[ResultRow]:
    """The run's per-question results for its files (``evaluation.exports``), by question id."""
    return [
        ResultRow(
            question_id=r.question.external_id,
            question=r.question.text,
            split=r.question.split,
            ranked_answer_ids=list(r.ranked_answer_ids),
            labels=list(r.labels),
            ndcg=r.ndcg,
            dcg=r.dcg,
            ideal_dcg=r.ideal_dcg,
            accuracy_hit=r.accuracy_hit,
            judged=r.judged,
            unlabelled_in_top_k=r.unlabelled_in_top_k,
            error=r.error,
        )
        for r in QuestionResult.objects.filter(run=run)
        .select_related("question")
        .order_by("question__external_id", "question_id")
    ]


@dataclass(frozen=True)
class HistoryPoint:
    run_id: int
    created_at: datetime
    ndcg: float | None
    ndcg_ci_low: float | None
    ndcg_ci_high: float | None
    accuracy: float | None
    label_count: int | None
    version: str

    @property
    def date_text(self) -> str:
        return self.created_at.strftime("%Y-%m-%d %H:%M")

    @property
    def ndcg_text(self) -> str:
        return "–" if self.ndcg is None else f"{self.ndcg:.3f}"

    @property
    def accuracy_text(self) -> str:
        return "–" if self.accuracy is None else f"{self.accuracy:.3f}"

    @property
    def labels_text(self) -> str:
        return "–" if self.label_count is None else f"{self.label_count:,}"

    def as_json(self) -> dict:
        return {
            "run": self.run_id,
            "t": int(self.created_at.timestamp()),
            "date": self.created_at.strftime("%Y-%m-%d %H:%M"),
            "ndcg": self.ndcg,
            "accuracy": self.accuracy,
            "labels": self.label_count,
            "version": self.version,
        }


def history(*, ranker: Ranker) -> list[HistoryPoint]:
    """Successful runs of the ranker, oldest first: the chart's points (failed runs are left out)."""
    rows = (
        EvaluationRun.objects.filter(ranker=ranker, status=RunStatus.SUCCEEDED)
        .order_by("created_at", "id")
        .values_list(
            "id",
            "created_at",
            "ndcg_mean",
            "ndcg_ci_low",
            "ndcg_ci_high",
            "accuracy_mean",
            "label_count",
            "ranker_version__label",
        )
    )
    return [HistoryPoint(*row[:7], version=row[7] or "no version") for row in rows]


@dataclass
class Dashboard:
    collection: Collection
    ranker: Ranker
    rankers: list[Ranker]
    latest: EvaluationRun | None
    active: EvaluationRun | None
    history: list[HistoryPoint]
    recent_runs: list[EvaluationRun] = field(default_factory=list)
    champion_changes: list[ChampionMark] = field(default_factory=list)

    @property
    def failed_runs(self) -> list[EvaluationRun]:
        return [r for r in self.recent_runs if r.status == RunStatus.FAILED]


RECENT_RUNS = 10
CHAMPION_MARKS = 200


@dataclass(frozen=True)
class ChampionMark:
    """A change of champion, as an annotation on the history chart and a row under it."""

    created_at: datetime
    version: str
    previous: str
    by: str  # a username, or "policy" when the promotion policy decided after a training

    @property
    def date_text(self) -> str:
        return self.created_at.strftime("%Y-%m-%d %H:%M")

    @property
    def text(self) -> str:
        return f"{self.previous} → {self.version}" if self.previous else self.version

    def as_json(self) -> dict:
        return {
            "t": int(self.created_at.timestamp()),
            "date": self.date_text,
            "text": self.text,
            "by": self.by,
        }


def champion_marks(*, ranker: Ranker) -> list[ChampionMark]:
    """The ranker's champion changes, oldest first (the most recent CHAMPION_MARKS), in one query."""
    rows = (
        ChampionChange.objects.filter(ranker=ranker)
        .order_by("-created_at", "-id")
        .values_list("created_at", "version__label", "previous__label", "changed_by__username")[
            :CHAMPION_MARKS
        ]
    )
    return [
        ChampionMark(created_at=created, version=version, previous=previous or "", by=by or "policy")
        for created, version, previous, by in reversed(rows)
    ]


def rankers_for_dashboard(*, collection: Collection) -> list[Ranker]:
    """The collection's rankers, the default one first."""
    return list(Ranker.objects.filter(collection=collection).order_by("-is_default", "name", "id"))


def dashboard(*, collection: Collection, ranker: Ranker, rankers: list[Ranker] | None = None) -> Dashboard:
    """Everything the dashboard shows for one ranker, in three queries (four without ``rankers``)."""
    if rankers is None:
        rankers = rankers_for_dashboard(collection=collection)
    runs = runs_for_ranker(ranker=ranker)
    recent = list(runs[:RECENT_RUNS])
    latest = runs.filter(status=RunStatus.SUCCEEDED).first()
    active = next((r for r in recent if r.status in ACTIVE), None)
    return Dashboard(
        collection=collection,
        ranker=ranker,
        rankers=rankers,
        latest=latest,
        active=active,
        history=history(ranker=ranker),
        recent_runs=recent,
        champion_changes=champion_marks(ranker=ranker),
    )


def mostly_unlabelled(*, k: int) -> Q:
    """Results whose top k holds more unrated answers than rated ones (their NDCG says little yet).

    A result stores the unrated count and judged@k (rated answers / k), so rated = judged × k; the
    half keeps float rounding of judged × k from deciding a tie (3 unrated beside 3 rated is not "mostly").
    """
    return Q(unlabelled_in_top_k__gt=F("judged") * k + 0.5)


def worst_questions(*, run: EvaluationRun, limit: int) -> list[QuestionResult]:
    """Where the ranker does badly: the lowest NDCG among questions with a known good answer whose top k
    is mostly rated (a question whose top k is mostly unrated needs ratings first: see needs_ratings)."""
    return list(
        QuestionResult.objects.filter(run=run, ndcg__isnull=False, error="")
        .exclude(mostly_unlabelled(k=run.ndcg_k))
        .select_related("question")
        .order_by("ndcg", "question_id")[:limit]
    )


def needs_ratings(*, run: EvaluationRun, limit: int) -> list[QuestionResult]:
    """Test questions whose NDCG cannot be trusted until someone rates: no known good answer (NDCG
    undefined) first, then those whose top k is mostly unrated, most unrated first."""
    return list(
        QuestionResult.objects.filter(run=run, error="")
        .filter(Q(ndcg__isnull=True) | mostly_unlabelled(k=run.ndcg_k))
        .select_related("question")
        .order_by(
            Case(When(ndcg__isnull=True, then=Value(0)), default=Value(1)),
            "-unlabelled_in_top_k",
            "question_id",
        )[:limit]
    )


def no_good_answer_questions(*, run: EvaluationRun, limit: int = 50) -> list[QuestionResult]:
    """Questions the ranker answered but where no answer is known to be relevant (NDCG undefined)."""
    return list(
        QuestionResult.objects.filter(run=run, ndcg__isnull=True, error="")
        .select_related("question")
        .order_by("question_id")[:limit]
    )


def run_in_collection(*, run_id: object, collection: Collection) -> EvaluationRun | None:
    """The run with this id if it belongs to the collection (ids from a query string may be anything)."""
    try:
        pk = int(str(run_id))
    except ValueError:
        return None
    return (
        EvaluationRun.objects.select_related("ranker", "ranker_version")
        .filter(pk=pk, collection=collection)
        .first()
    )


@dataclass(frozen=True)
class Contribution:
    ratings: int
    test_ratings: int


def rater_contribution(*, user: AbstractBaseUser, collection: Collection) -> Contribution:
    """The user's ratings in the collection (and how many are on test questions), in one query."""
    counts = Rating.objects.filter(rater_id=user.pk, question__collection=collection).aggregate(
        total=Count("id"), test=Count("id", filter=Q(question__split=Split.TEST))
    )
    return Contribution(ratings=counts["total"], test_ratings=counts["test"])


# ----------------------------------------------------------------------------------------- figures


def figure(value: float | None) -> str:
    """An NDCG (or any 0–1 score) as the pages show it: three decimals, "–" when undefined."""
    if value is None or math.isnan(value):
        return "–"
    return f"{value:.3f}"


def signed(value: float | None, digits: int = 3) -> str:
    """A difference as the pages show it: signed, three decimals ("+0.023", "−0.004"; never "−0.000")."""
    if value is None or math.isnan(value):
        return "–"
    rounded = round(value, digits) or 0.0  # -0.0 is falsy: a difference that rounds to zero shows "+0.000"
    return f"{rounded:+.{digits}f}".replace("-", "−")


def p_text(p: float | None) -> str:
    """A p-value as the pages show it: "p = 0.010", or "p < 0.001"."""
    if p is None or math.isnan(p):
        return "p = –"
    return "p < 0.001" if p < 0.001 else f"p = {p:.3f}"


# ----------------------------------------------------------------------------------------- comparing runs


@dataclass(frozen=True)
class QuestionDelta:
    """One question of a comparison: both runs' rankings scored with today's labels (B − A)."""

    question_id: int
    external_id: str
    text: str
    ndcg_a: float | None
    ndcg_b: float | None
    hit_a: bool | None
    hit_b: bool | None

    @property
    def delta(self) -> float | None:
        if self.ndcg_a is None or self.ndcg_b is None:
            return None
        return self.ndcg_b - self.ndcg_a

    @property
    def ndcg_a_text(self) -> str:
        return figure(self.ndcg_a)

    @property
    def ndcg_b_text(self) -> str:
        return figure(self.ndcg_b)

    @property
    def delta_text(self) -> str:
        return signed(self.delta)


# Differences smaller than this show as +0.000 and are not worth a line of their own.
SHOWN = 0.0005


def _version(run: EvaluationRun) -> str:
    return f"version {run.ranker_version.label}" if run.ranker_version is not None else "no version"


@dataclass(frozen=True)
class ChangeExplanation:
    """Why the headline moved from run A to run B, split into what we know and what the ranker does.

    See :func:`change_explained` for the definitions. Every ``*_text`` property is what the dashboard's
    change line and the compare page print, so the two pages cannot disagree.
    """

    run_a: EvaluationRun
    run_b: EvaluationRun
    ndcg_a: float | None  # A's own headline, with the labels A had
    ndcg_b: float | None  # B's own headline, with the labels B had
    a_today: float | None  # A's rankings scored with today's labels
    b_today: float | None  # B's rankings scored with today's labels
    label_effect: float | None
    ranker_effect: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    verdict: str  # "real improvement", "within noise", "real drop"; "" when no question can be paired
    paired: int  # questions in the ranker comparison (answered by both, a known good answer today)
    only_one_run: int  # answered questions missing from the other run (or failed there)
    labels_since_b: bool  # today's labels score B's rankings differently than when B ran
    definition_changed: bool  # k, gain or discount differ between the runs (today's scores use B's)
    questions: list[QuestionDelta] = field(default_factory=list)

    @property
    def total(self) -> float | None:
        """B's headline minus A's headline: the number the history chart shows moving."""
        if self.ndcg_a is None or self.ndcg_b is None:
            return None
        return self.ndcg_b - self.ndcg_a

    @property
    def other(self) -> float | None:
        """What neither effect covers: ratings made after B ran, questions only one run answered."""
        if self.total is None or self.label_effect is None or self.ranker_effect is None:
            return None
        return self.total - self.label_effect - self.ranker_effect

    @property
    def same_ranker(self) -> bool:
        return self.run_a.ranker_id == self.run_b.ranker_id

    @property
    def same_version(self) -> bool:
        return self.same_ranker and self.run_a.ranker_version_id == self.run_b.ranker_version_id

    @property
    def versions_text(self) -> str:
        """Which rankers were compared: "same ranker version", "version v1 → version v2",
        "no version → version v1", or with two rankers "BM25 (version v1) → Service (no version)"."""
        if self.same_version:
            return "same ranker version"
        if self.same_ranker:
            return f"{_version(self.run_a)} → {_version(self.run_b)}"
        a, b = self.run_a, self.run_b
        return f"{a.ranker.name} ({_version(a)}) → {b.ranker.name} ({_version(b)})"

    @property
    def total_text(self) -> str:
        return signed(self.total)

    @property
    def ndcg_a_text(self) -> str:
        return figure(self.ndcg_a)

    @property
    def ndcg_b_text(self) -> str:
        return figure(self.ndcg_b)

    @property
    def a_today_text(self) -> str:
        return figure(self.a_today)

    @property
    def b_today_text(self) -> str:
        return figure(self.b_today)

    @property
    def label_text(self) -> str:
        """For example "+0.023: new ratings changed what we know (ranker unchanged)"."""
        if self.label_effect is None:
            return "–: the previous run's score is unknown"
        return f"{signed(self.label_effect)}: new ratings changed what we know (ranker unchanged)"

    @property
    def ranker_text(self) -> str:
        """For example "+0.031: version v3 → version v4 (real improvement, p = 0.010)"."""
        if self.ranker_effect is None:
            return "–: no test question was answered by both runs with a known good answer"
        return f"{self.ranker_effect_text}: {self.versions_text} ({self.verdict}, {self.p_value_text})"

    @property
    def ranker_effect_text(self) -> str:
        return signed(self.ranker_effect)

    @property
    def other_text(self) -> str:
        """The rest of the change, when it shows in three decimals ("" otherwise)."""
        if self.other is None or abs(self.other) < SHOWN:
            return ""
        reasons = []
        if self.labels_since_b:
            reasons.append("ratings made after the newer run")
        if self.only_one_run:
            n = self.only_one_run
            reasons.append(f"{n} question{'s' if n != 1 else ''} only one run answered")
        why = " and ".join(reasons) or "questions scored differently"
        return f"{signed(self.other)}: {why}"

    @property
    def p_value_text(self) -> str:
        return p_text(self.p_value)

    @property
    def ci_text(self) -> str:
        """The ranker effect's 95% interval ("−0.010 to +0.052"); "" when it is a single value."""
        if self.ci_low is None or self.ci_high is None or signed(self.ci_low) == signed(self.ci_high):
            return ""
        return f"{signed(self.ci_low)} to {signed(self.ci_high)}"

    @property
    def verdict_class(self) -> str:
        return {"real improvement": "up", "real drop": "down"}.get(self.verdict, "flat")


def _mean_defined(values: np.ndarray) -> float | None:
    defined = values[~np.isnan(values)]
    return float(defined.mean()) if defined.size else None


def change_explained(*, run_a: EvaluationRun, run_b: EvaluationRun) -> ChangeExplanation:
    """Split the change of the headline NDCG@k from run A to run B into a label and a ranker effect.

    With ``NDCG(R, L)`` the mean NDCG@k of rankings ``R`` under labels ``L`` over the questions with a
    known good answer (the headline's rule), ``R_A``, ``R_B`` the rankings each run stored
    (``QuestionResult.ranked_answer_ids``), ``L_A`` the labels A had and ``L_now`` today's labels:

    * label effect  = ``NDCG(R_A, L_now) − NDCG(R_A, L_A)``: A's rankings unchanged, only what we know
      about their answers changed (``NDCG(R_A, L_A)`` is A's stored headline, ``run_a.ndcg_mean``);
    * ranker effect = ``mean_q [NDCG_q(R_B, L_now) − NDCG_q(R_A, L_now)]`` over the questions both runs
      answered that have a known good answer today, with the bootstrap CI and paired randomization
      p-value of ``evaluation.metrics.stats.compare_runs`` (seed ``STATS_SEED``, as runs use);
    * other = ``(B − A) − label effect − ranker effect``: ratings made after B ran and questions only
      one run answered. It is 0 when both runs answered the same questions and B ran with today's labels,
      so then ``label effect + ranker effect = B − A`` (the two headlines).

    Today's scores use run B's metric definition (k, gain, discount) through ``score_rankings``, the
    function runs score with; the ideal DCG comes from all of a question's labels.

    The figures are cached (``CHANGE_CACHE_SECONDS``) for two finished runs and the state of the test
    questions' labels (count, last change), so a page view costs one query unless a label changed; a
    new or changed label computes them again (three queries).
    """
    key = _change_cache_key(run_a, run_b)
    fields = cache.get(key) if key else None
    if fields is None:
        fields = _change_compute(run_a, run_b)
        if key:
            cache.set(key, fields, CHANGE_CACHE_SECONDS)
    return ChangeExplanation(run_a=run_a, run_b=run_b, **fields)


# Cached change figures live this long (they are keyed by the labels' state, so never stale).
CHANGE_CACHE_SECONDS = 24 * 60 * 60


def _change_cache_key(run_a: EvaluationRun, run_b: EvaluationRun) -> str | None:
    """A key naming both runs' final results and the collection's test labels now (None: do not cache)."""
    if not (run_a.is_finished and run_b.is_finished and run_a.finished_at and run_b.finished_at):
        return None
    state = Label.objects.filter(
        question__collection_id=run_b.collection_id, question__split=Split.TEST
    ).aggregate(n=Count("id"), last=Max("updated_at"), top=Max("id"))
    parts = [
        run_a.pk,
        run_a.finished_at.isoformat(),
        run_b.pk,
        run_b.finished_at.isoformat(),
        state["n"],
        state["last"].isoformat() if state["last"] else "-",
        state["top"],
    ]
    return "evaluation:change:" + hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


def _change_compute(run_a: EvaluationRun, run_b: EvaluationRun) -> dict[str, Any]:
    """The figures of :func:`change_explained` (every field but the runs), in three queries."""
    rows = (
        QuestionResult.objects.filter(run_id__in=[run_a.pk, run_b.pk], error="")
        .order_by("question_id")
        .values_list("run_id", "question_id", "question__external_id", "question__text", "ranked_answer_ids")
    )
    rankings: dict[int, dict[int, list[str]]] = {run_a.pk: {}, run_b.pk: {}}
    texts: dict[int, tuple[str, str]] = {}
    for run_id, question_id, external_id, text, ranked in rows:
        rankings[run_id][question_id] = ranked
        texts[question_id] = (external_id, text)
    question_ids = sorted(texts)
    labels = labels_by_question(question_ids=question_ids)

    def today(run: EvaluationRun) -> tuple[dict[int, float], dict[int, bool]]:
        ids = sorted(rankings[run.pk])
        if not ids:
            return {}, {}
        scored = score_rankings(
            run=run_b, rankings=[rankings[run.pk][q] for q in ids], labels=[labels[q] for q in ids]
        )
        ndcg = {q: float(scored.ndcg[i]) for i, q in enumerate(ids)}
        return ndcg, {q: bool(scored.success[i]) for i, q in enumerate(ids)}

    (ndcg_a, hit_a), (ndcg_b, hit_b) = today(run_a), today(run_b)
    a_today = _mean_defined(np.array(list(ndcg_a.values()), dtype=np.float64))
    b_today = _mean_defined(np.array(list(ndcg_b.values()), dtype=np.float64))
    both = [q for q in question_ids if q in ndcg_a and q in ndcg_b]
    comparison = compare_runs([ndcg_b[q] for q in both], [ndcg_a[q] for q in both], seed=STATS_SEED)
    compared = comparison.n > 0

    def defined(value: float | None) -> float | None:
        return None if value is None or math.isnan(value) else value

    questions = [
        QuestionDelta(
            question_id=q,
            external_id=texts[q][0],
            text=texts[q][1],
            ndcg_a=defined(ndcg_a.get(q)),
            ndcg_b=defined(ndcg_b.get(q)),
            hit_a=hit_a.get(q),
            hit_b=hit_b.get(q),
        )
        for q in question_ids
    ]
    questions.sort(key=lambda d: (d.delta is None, -(d.delta or 0.0), d.question_id))
    definition = ("ndcg_k", "gain_scheme", "discount")
    return dict(
        ndcg_a=run_a.ndcg_mean,
        ndcg_b=run_b.ndcg_mean,
        a_today=a_today,
        b_today=b_today,
        label_effect=a_today - run_a.ndcg_mean
        if a_today is not None and run_a.ndcg_mean is not None
        else None,
        ranker_effect=comparison.difference if compared else None,
        ci_low=comparison.ci_low if compared else None,
        ci_high=comparison.ci_high if compared else None,
        p_value=comparison.p_value if compared else None,
        verdict=comparison.verdict() if compared else "",
        paired=comparison.n,
        only_one_run=len(ndcg_a.keys() ^ ndcg_b.keys()),
        labels_since_b=b_today is not None
        and run_b.ndcg_mean is not None
        and abs(b_today - run_b.ndcg_mean) >= 1e-12,
        definition_changed=any(getattr(run_a, f) != getattr(run_b, f) for f in definition),
        questions=questions,
    )


def previous_successful_run(*, run: EvaluationRun) -> EvaluationRun | None:
    """The ranker's last successful run created before this one (the dashboard's "previous run")."""
    return (
        EvaluationRun.objects.filter(ranker_id=run.ranker_id, status=RunStatus.SUCCEEDED)
        .filter(Q(created_at__lt=run.created_at) | Q(created_at=run.created_at, pk__lt=run.pk))
        .select_related("ranker", "ranker_version")
        .order_by("-created_at", "-id")
        .first()
    )


@dataclass(frozen=True)
class UnknownIds:
    """Answer ids a run's ranker returned that the collection does not have (they count as unlabelled)."""

    questions: int  # questions whose ranking held at least one
    ids: int  # how many in all, repeats across questions included
    examples: list[str]

    def as_json(self) -> dict:
        return {"questions": self.questions, "ids": self.ids, "examples": self.examples}


def unknown_ids(*, run: EvaluationRun, examples: int = 5) -> UnknownIds:
    """Summary of the unknown answer ids of a run, in one query."""
    lists = list(
        QuestionResult.objects.filter(run=run)
        .exclude(unknown_answer_ids=[])
        .values_list("unknown_answer_ids", flat=True)
    )
    seen: list[str] = []
    for ids in lists:
        for answer_id in ids:
            if answer_id not in seen and len(seen) < examples:
                seen.append(str(answer_id))
    return UnknownIds(questions=len(lists), ids=sum(len(ids) for ids in lists), examples=seen)


# ------------------------------------------------------------------------------------- comparing N runs

# How many runs one comparison takes: 6 runs are 15 pairs, which a table can still show.
COMPARE_MIN_RUNS, COMPARE_MAX_RUNS = 2, 6
# The N-run matrix lists this many questions (those where the runs differ most first).
MATRIX_SHOWN = 200
# Per pair, the biggest winners and losers named.
PAIR_EXAMPLES = 3


@dataclass(frozen=True)
class MatrixRow:
    """One question of an N-run comparison: each run's NDCG@k with today's labels (None: undefined)."""

    question_id: int
    external_id: str
    text: str
    ndcg: list[float | None]

    @property
    def spread(self) -> float | None:
        """Best minus worst run on this question (None when fewer than two runs have a value)."""
        values = [v for v in self.ndcg if v is not None]
        return max(values) - min(values) if len(values) >= 2 else None

    @property
    def cells(self) -> list[tuple[str, bool]]:
        """Each run's figure as shown ("0.772", "–") and whether it is this question's best."""
        values = [v for v in self.ndcg if v is not None]
        best = max(values) if len(values) >= 2 and self.spread else None
        return [(figure(v), v is not None and v == best) for v in self.ndcg]


@dataclass(frozen=True)
class PairResult:
    """Run B against run A (B newer) on the questions both answered with a known good answer today.

    ``difference`` = mean NDCG@k of B − mean of A; ``p_value`` is the paired randomization test's,
    ``p_holm`` the same after Holm's correction over all the comparison's pairs
    (``evaluation.metrics.holm``), and ``verdict`` is read from ``p_holm``.
    """

    a: int  # index into RunsComparison.runs
    b: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    p_holm: float | None
    verdict: str
    n: int
    winners: int  # questions where B scores higher than A
    losers: int
    ties: int
    biggest_winners: list[tuple[str, float]] = field(default_factory=list)  # (question text, B − A)
    biggest_losers: list[tuple[str, float]] = field(default_factory=list)

    @property
    def difference_text(self) -> str:
        return signed(self.difference)

    @property
    def ci_text(self) -> str:
        if self.ci_low is None or self.ci_high is None:
            return "–"
        return f"{signed(self.ci_low)} to {signed(self.ci_high)}"

    @property
    def p_text(self) -> str:
        return p_text(self.p_value)

    @property
    def p_holm_text(self) -> str:
        return p_text(self.p_holm).replace("p", "p (Holm)", 1)

    @property
    def verdict_class(self) -> str:
        return {"real improvement": "up", "real drop": "down"}.get(self.verdict, "flat")

    @property
    def winners_text(self) -> list[tuple[str, str]]:
        return [(text, signed(delta)) for text, delta in self.biggest_winners]

    @property
    def losers_text(self) -> list[tuple[str, str]]:
        return [(text, signed(delta)) for text, delta in self.biggest_losers]


@dataclass(frozen=True)
class RunsComparison:
    runs: list[EvaluationRun]  # oldest first
    means: list[float | None]  # each run's mean NDCG@k with today's labels
    questions: list[MatrixRow]  # every question any run answered, biggest spread first
    pairs: list[PairResult]  # (0, 1), (0, 2), ..., (N − 2, N − 1)

    @property
    def k(self) -> int:
        """The cutoff the figures use: the newest run's."""
        return self.runs[-1].ndcg_k

    @property
    def run_rows(self) -> list[tuple[int, EvaluationRun, str]]:
        """(number, run, its NDCG@k today as shown), oldest first, numbered from 1."""
        return [
            (i, run, figure(mean)) for i, (run, mean) in enumerate(zip(self.runs, self.means, strict=True), 1)
        ]


def runs_compare(*, runs: list[EvaluationRun]) -> RunsComparison:
    """Compare 2 to 6 runs of one collection side by side, every run scored with today's labels.

    Each run's stored rankings (``QuestionResult.ranked_answer_ids``) are scored with today's labels
    under the newest run's metric definition (as ``change_explained`` scores with run B's), giving the
    matrix ``NDCG_q(R_r, L_now)``. For each pair of runs (A older than B), on the questions where both
    are defined: ``difference = mean_q [NDCG_q(B) − NDCG_q(A)]`` with its bootstrap 95% interval and
    paired randomization p-value (``evaluation.metrics.stats.compare_runs``, seed ``STATS_SEED``), the
    questions B wins, loses and ties; then the pairs' p-values are corrected together by Holm's method
    (``evaluation.metrics.holm.holm_adjust``): with 15 pairs, uncorrected p < 0.05 would call about
    one pair in 20 "real" by chance. The verdict is "real improvement" / "real drop" when the Holm
    p-value is below 0.05 (``evaluation.metrics.pairwise.compare_pairs``). ValueError for fewer than 2
    or more than 6 runs, or runs of two collections.

    Six runs are 15 pairs of 10,000 bootstrap resamples and permutations each (``bench/bench_compare.py``
    measures it), so the figures of finished runs are cached as ``change_explained``'s are: keyed by the
    runs and the state of the test labels, never stale.
    """
    if not COMPARE_MIN_RUNS <= len(runs) <= COMPARE_MAX_RUNS:
        raise ValueError(f"compare {COMPARE_MIN_RUNS} to {COMPARE_MAX_RUNS} runs, not {len(runs)}")
    if len({r.collection_id for r in runs}) != 1:
        raise ValueError("the runs must belong to one collection")
    if len({r.pk for r in runs}) != len(runs):
        raise ValueError("each run can be compared once")
    runs = sorted(runs, key=lambda r: (r.created_at, r.pk))
    key = _compare_cache_key(runs)
    fields = cache.get(key) if key else None
    if fields is None:
        fields = _runs_compare_compute(runs)
        if key:
            cache.set(key, fields, CHANGE_CACHE_SECONDS)
    return RunsComparison(runs=runs, **fields)


def _compare_cache_key(runs: list[EvaluationRun]) -> str | None:
    """As ``_change_cache_key``, for any number of finished runs (None: do not cache)."""
    if not all(run.is_finished and run.finished_at for run in runs):
        return None
    state = Label.objects.filter(
        question__collection_id=runs[-1].collection_id, question__split=Split.TEST
    ).aggregate(n=Count("id"), last=Max("updated_at"), top=Max("id"))
    parts = [f"{run.pk}@{run.finished_at.isoformat() if run.finished_at else '-'}" for run in runs]
    parts += [state["n"], state["last"].isoformat() if state["last"] else "-", state["top"]]
    return "evaluation:compare:" + hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


def _runs_compare_compute(runs: list[EvaluationRun]) -> dict[str, Any]:
    """The figures of :func:`runs_compare` (every field but the runs), runs oldest first."""
    reference = runs[-1]
    rows = (
        QuestionResult.objects.filter(run_id__in=[r.pk for r in runs], error="")
        .order_by("question_id")
        .values_list("run_id", "question_id", "question__external_id", "question__text", "ranked_answer_ids")
    )
    rankings: dict[int, dict[int, list[str]]] = {r.pk: {} for r in runs}
    texts: dict[int, tuple[str, str]] = {}
    for run_id, question_id, external_id, text, ranked in rows:
        rankings[run_id][question_id] = ranked
        texts[question_id] = (external_id, text)
    question_ids = sorted(texts)
    position = {q: i for i, q in enumerate(question_ids)}
    labels = labels_by_question(question_ids=question_ids)
    matrix = np.full((len(question_ids), len(runs)), np.nan)
    for column, run in enumerate(runs):
        ids = sorted(rankings[run.pk])
        if ids:
            scored = score_rankings(
                run=reference, rankings=[rankings[run.pk][q] for q in ids], labels=[labels[q] for q in ids]
            )
            matrix[[position[q] for q in ids], column] = scored.ndcg
    pairs: list[PairResult] = []
    for pair in compare_pairs(matrix, seed=STATS_SEED):
        a, b, comparison = pair.a, pair.b, pair.comparison
        both = ~(np.isnan(matrix[:, a]) | np.isnan(matrix[:, b]))
        delta = matrix[:, b] - matrix[:, a]
        order = np.argsort(-np.where(both, delta, 0.0), kind="stable")
        compared = comparison.n > 0
        up = [i for i in order if both[i] and delta[i] > 0][:PAIR_EXAMPLES]
        down = [i for i in order[::-1] if both[i] and delta[i] < 0][:PAIR_EXAMPLES]
        pairs.append(
            PairResult(
                a=a,
                b=b,
                difference=comparison.difference if compared else None,
                ci_low=comparison.ci_low if compared else None,
                ci_high=comparison.ci_high if compared else None,
                p_value=comparison.p_value if compared else None,
                p_holm=pair.p_holm if compared else None,
                verdict=dataclasses.replace(comparison, p_value=pair.p_holm).verdict() if compared else "",
                n=comparison.n,
                winners=pair.winners,
                losers=pair.losers,
                ties=pair.ties,
                biggest_winners=[(texts[question_ids[i]][1], float(delta[i])) for i in up],
                biggest_losers=[(texts[question_ids[i]][1], float(delta[i])) for i in down],
            )
        )

    def value(x: float) -> float | None:
        return None if math.isnan(x) else float(x)

    questions = [
        MatrixRow(q, texts[q][0], texts[q][1], [value(x) for x in matrix[position[q]]]) for q in question_ids
    ]
    questions.sort(key=lambda row: (row.spread is None, -(row.spread or 0.0), row.question_id))
    means = [_mean_defined(matrix[:, c]) for c in range(len(runs))]
    return {"means": means, "questions": questions, "pairs": pairs}
