"""Why the headline moved from one run to the next: a label effect (what we know changed) and a ranker
effect (what the ranker does changed), with the questions that moved most. See :func:`change_explained`."""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max

from corpus.models import Split
from evaluation import measures
from evaluation.metrics.stats import compare_runs
from evaluation.models import EvaluationRun, QuestionResult
from evaluation.numbers import figure, interval, p_text, signed
from evaluation.services import STATS_SEED, score_rankings
from ratings.models import Label
from ratings.selectors import labels_by_question


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
    ranker_effect: float | None  # in the headline's NDCG@k, so that the split adds up to the change
    # The comparison of the two rankings on the paired questions, in NDCG@k on rated answers (every
    # comparison's measure): its difference, interval, p-value and verdict.
    rated_difference: float | None
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
        """For example "+0.031: version v3 → version v4; NDCG@10 on rated answers +0.045 (real improvement,
        p = 0.010)"."""
        if self.ranker_effect is None:
            return "–: no test question was answered by both runs with a known good answer"
        return f"{self.ranker_effect_text}: {self.versions_text}; {self.rated_text}"

    @property
    def ranker_effect_text(self) -> str:
        return signed(self.ranker_effect)

    @property
    def rated_difference_text(self) -> str:
        return signed(self.rated_difference)

    @property
    def rated_text(self) -> str:
        """The rankings compared as every comparison is: "NDCG@10 on rated answers +0.045 (real
        improvement, p = 0.010)"."""
        rated = measures.name(measures.NDCG_RATED, self.run_b.ndcg_k)
        return f"{rated} {self.rated_difference_text} ({self.verdict}, {self.p_value_text})"

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
        return interval(self.ci_low, self.ci_high)

    @property
    def verdict_class(self) -> str:
        return {"real improvement": "up", "real drop": "down"}.get(self.verdict, "flat")


def mean_defined(values: np.ndarray) -> float | None:
    """The mean of the values that are not NaN (None when none is)."""
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
      answered that have a known good answer today;
    * the comparison of the rankings on those questions, as every comparison in the app is made: in
      NDCG@k on rated answers (``evaluation.measures.NDCG_RATED``, each ranking condensed to its rated
      answers), ``rated_difference`` with the bootstrap CI, paired randomization p-value and verdict of
      ``evaluation.metrics.stats.compare_runs`` (seed ``STATS_SEED``, as runs use);
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
    # v2: the fields gained the rated comparison (a cached dict of the old fields would not fit).
    return "evaluation:change:v2:" + hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


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

    def today(run: EvaluationRun, rated_only: bool = False) -> tuple[dict[int, float], dict[int, bool]]:
        ids = sorted(rankings[run.pk])
        if not ids:
            return {}, {}
        scored = score_rankings(
            run=run_b,
            rankings=[rankings[run.pk][q] for q in ids],
            labels=[labels[q] for q in ids],
            rated_only=rated_only,
        )
        ndcg = {q: float(scored.ndcg[i]) for i, q in enumerate(ids)}
        return ndcg, {q: bool(scored.success[i]) for i, q in enumerate(ids)}

    (ndcg_a, hit_a), (ndcg_b, hit_b) = today(run_a), today(run_b)
    (rated_a, _), (rated_b, _) = today(run_a, rated_only=True), today(run_b, rated_only=True)
    a_today = mean_defined(np.array(list(ndcg_a.values()), dtype=np.float64))
    b_today = mean_defined(np.array(list(ndcg_b.values()), dtype=np.float64))
    both = [q for q in question_ids if q in ndcg_a and q in ndcg_b]
    # The split of the headline's change is in its own measure (so that it adds up); the verdict on the
    # rankings is every comparison's: NDCG@k on rated answers, on the same questions.
    effect = compare_runs([ndcg_b[q] for q in both], [ndcg_a[q] for q in both], seed=STATS_SEED)
    comparison = compare_runs([rated_b[q] for q in both], [rated_a[q] for q in both], seed=STATS_SEED)
    compared = comparison.n > 0 and effect.n > 0

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
        ranker_effect=effect.difference if compared else None,
        rated_difference=comparison.difference if compared else None,
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
