"""2 to 6 runs of a collection side by side: each run's NDCG@k per question with today's labels, and
every pair of runs compared, with Holm's correction over the pairs. See :func:`runs_compare`."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.core.cache import cache
from django.db.models import Count, Max

from corpus.models import Split
from evaluation.metrics.pairwise import compare_pairs
from evaluation.models import EvaluationRun, QuestionResult
from evaluation.numbers import figure, interval, p_text, percent, signed
from evaluation.services import STATS_SEED, rated_share, score_rankings
from ratings.models import Label
from ratings.selectors import labels_by_question

from .change import CHANGE_CACHE_SECONDS, mean_defined

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
        return interval(self.ci_low, self.ci_high)

    @property
    def p_text(self) -> str:
        return p_text(self.p_value)

    @property
    def p_holm_text(self) -> str:
        return p_text(self.p_holm, name="p (Holm)")

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
    means: list[float | None]  # each run's mean NDCG@k on rated answers with today's labels
    rated_shares: list[float | None]  # each run's share of rated answers in its top k, today
    questions: list[MatrixRow]  # every question any run answered, biggest spread first
    pairs: list[PairResult]  # (0, 1), (0, 2), ..., (N − 2, N − 1)

    @property
    def k(self) -> int:
        """The cutoff the figures use: the newest run's."""
        return self.runs[-1].ndcg_k

    @property
    def run_rows(self) -> list[tuple[int, EvaluationRun, str, str]]:
        """(number, run, its NDCG@k on rated answers today, its share of rated answers in the top k), oldest
        first, numbered from 1."""
        return [
            (i, run, figure(mean), percent(share))
            for i, (run, mean, share) in enumerate(
                zip(self.runs, self.means, self.rated_shares, strict=True), 1
            )
        ]


def runs_compare(*, runs: list[EvaluationRun]) -> RunsComparison:
    """Compare 2 to 6 runs of one collection side by side, every run scored with today's labels.

    Each run's stored rankings (``QuestionResult.ranked_answer_ids``) are scored with today's labels
    under the newest run's metric definition (as ``change_explained`` scores with run B's), as NDCG@k on
    rated answers (``evaluation.measures.NDCG_RATED``, every comparison's measure: each ranking condensed
    to its rated answers), giving the matrix ``NDCG_q(R_r, L_now)``; with each run's share of rated
    answers in its top k. For each pair of runs (A older than B), on the questions where both
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
    # v2: the fields gained each run's rated share (a cached dict of the old fields would not fit).
    return "evaluation:compare:v2:" + hashlib.sha256(":".join(map(str, parts)).encode()).hexdigest()


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
    shares: list[float | None] = [None] * len(runs)
    for column, run in enumerate(runs):
        ids = sorted(rankings[run.pk])
        if ids:
            ranked = [rankings[run.pk][q] for q in ids]
            known = [labels[q] for q in ids]
            scored = score_rankings(run=reference, rankings=ranked, labels=known, rated_only=True)
            matrix[[position[q] for q in ids], column] = scored.ndcg
            # The share of rated answers in each ranking's top k, shown beside the comparison's figure.
            shares[column] = rated_share(ranked, known, reference.ndcg_k)
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
    means = [mean_defined(matrix[:, c]) for c in range(len(runs))]
    return {"means": means, "rated_shares": shares, "questions": questions, "pairs": pairs}
