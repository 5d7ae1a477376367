"""Training a ranker: choose, by cross-validation on TRAINING questions, how to rerank its candidates.

Test questions are what evaluations score a version on, so nothing about them may reach training:
labels are read through ``labels_for_collection(split="train")`` and only train-split questions are
examples (also as the rated neighbours that propagation draws on).

Candidates, each ranking a question's top ``candidates`` BM25 answers (``rankers.signals`` says what the
signals are):

=================  ===================================================================  ===========
candidate          how it ranks                                                         needs labels
=================  ===================================================================  ===========
bm25               BM25's own order                                                     no
fusion             z(bm25) + z(cosine): z-scores within the question's candidates       no
learned-fusion     Σ w_f · z(f) over bm25, cosine, rm3, propagation; the weights by      yes
                   coordinate ascent on the training questions' NDCG@k
                   (``rankers.fusion.fit_linear_fusion``)
lambdamart         LightGBM LambdaMART on the 12 lexical features plus cosine, rm3 and   yes
                   propagation (``rankers.fitting``)
=================  ===================================================================  ===========

The first stage (``FirstStage``) is BM25 for the builtin ranker. For an engine or http ranker it is the
user's engine: the candidates are its top ``candidates`` answers (those the collection knows), ``engine``
takes bm25's place in the table (its own order; z(engine) + z(cosine)), and the learners also get the
signals ``engine`` and ``engine_rank`` (the app's bm25 stays a signal, computed on its copy of the answers).

An unrated answer is unknown, not bad. People rate what the queue shows them, so most candidates of a
question are unrated; reading them as 0 stars teaches a learner to rank the already-rated answers first
and lets cross-validation reward it for that (on public collections a version trained so lost to the
untrained fusion by 0.03-0.07 NDCG@10). So:

- training targets are the rated candidates only (``targets`` is NaN for the others): the learned fusion
  and LambdaMART fit on the pairs and lists of rated candidates (features are still computed, and
  z-scored, over all candidates, as at ranking time);
- cross-validation scores a held-out question on its **condensed** top k: the k answers the ranking
  would return, unrated ones removed, then NDCG@k, i.e. judged-only NDCG as ``trec_eval -J -m
  ndcg_cut.k`` computes it on a run of depth k, the champion/challenger test's measure (chosen
  over reading the certainty page's relevance estimates because it needs no model of the raters and
  is what trec_eval defines; ``bench/bench_loop.py`` measures the result on the product's own loop);
- ``rated_share`` says how much of each figure rests on rated answers: the share of the top-k
  positions of the held-out (uncondensed) rankings that hold a rated answer.

Cross-validation: ``len(FOLD_SEEDS)`` assignments of the questions to ``CV_FOLDS`` folds. A held-out
fold is treated as new questions: the learners and propagation see only the other folds' labels. Each
candidate's CV NDCG@k is the mean over questions of its held-out judged-only NDCG@k, averaged over the
assignments; ``spread`` is the range of the per-assignment means (how much the figure depends on the
folds). NDCG@k uses the collection's k, gain and discount, with the ideal DCG from all of a question's
labels.

The guard: a candidate that learned from ratings is chosen only when its CV NDCG@k (judged-only) beats
the best candidate that needed none (bm25, fusion) by at least ``MIN_CV_GAIN``, so a trained version
never loses, in cross-validation, to what needed no ratings. Without embeddings (model package missing or
broken) the semantic candidates are left out and the version says so.

Training is deterministic for given labels (fixed seeds, one thread).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, cast

import lightgbm as lgb
import numpy as np
from scipy import sparse

from corpus.models import Collection, GainScheme, Question, Split
from evaluation.metrics.ranking import Discount as MetricDiscount
from evaluation.metrics.ranking import Gain, label_arrays, mean_ignoring_undefined, ndcg_at_k
from evaluation.metrics.stats import compare_runs
from rankers.base import RankerBackend, RankQuery
from rankers.builtin import bm25_candidates
from rankers.embedding import EmbeddingUnavailable
from rankers.features import FEATURE_NAMES, FEATURE_VERSION, candidate_features
from rankers.fitting import lambdamart_fit
from rankers.fusion import (
    UNTRAINED_FUSION_WEIGHTS,
    LinearFusion,
    fit_linear_fusion,
    ideal_dcg_from_labels,
    untrained_fusion,
)
from rankers.index import CollectionIndex
from rankers.propagation import propagation_scores
from rankers.semantic import CandidateVectors, answer_texts, embeddings_build_now, question_vectors
from rankers.signals import (
    ENGINE,
    PROPAGATION_NEIGHBOURS,
    PROPAGATION_POWER,
    RatedQuestions,
    candidate_signals,
)
from rankers.text import tokenize
from ratings.models import Rating
from ratings.selectors import labels_for_collection

CV_FOLDS = 5
FOLD_SEEDS = (20240601, 7, 1234)
MIN_QUESTIONS = 10
MIN_CV_GAIN = 0.005
SEED = 20240601
LEARNED_SIGNALS = ("bm25", "cosine", "rm3", "propagation")
EXTRA_LAMBDAMART = ("cosine", "rm3", "propagation")
LAMBDAMART_PARAMS: dict[str, Any] = {
    "num_leaves": 7,
    "min_data_in_leaf": 20,
    "learning_rate": 0.05,
    "num_iterations": 100,
}

Progress = Callable[[str, float], None]
VectorsOf = Callable[[np.ndarray], np.ndarray]


@dataclass(frozen=True)
class FirstStage:
    """Where a question's candidates come from, best first: BM25 over the app's copy of the answers
    (``name`` "bm25"), or an engine or ranker service (``name`` "engine": its top answers, with its
    scores as the ``engine`` signal). The learner's untrained candidates are this order and the fusion
    of its score with the cosine; the trained ones rerank it."""

    name: str
    title: str  # as a sentence names it: "BM25", "the engine"
    pool: str  # its candidates in a sentence: "BM25 candidates", "the engine's top answers"
    backend: RankerBackend | None = None  # the engine (None for BM25)

    @property
    def signals(self) -> tuple[str, ...]:
        """The signals only this first stage has."""
        return ENGINE if self.name == "engine" else ()

    def candidates(
        self, index: CollectionIndex, question: Question, terms: list[str], depth: int
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(positions in first-stage order, title + body BM25 of every answer, first-stage score of each
        candidate). An engine's answers the collection does not know are left out: nobody can rate them.
        Raises RankerError / RankerUnavailable when the engine fails."""
        if self.backend is None:
            positions, bm25 = bm25_candidates(index, terms, depth)
            return positions, bm25, bm25[positions].astype(np.float64)
        ranking = self.backend.rank(RankQuery(external_id=question.external_id, text=question.text), depth)
        known = [(index.position[a], s) for a, s in ranking.answers if a in index.position]
        positions = np.array([p for p, _ in known], dtype=np.int64)
        return positions, index.scores("both", terms), np.array([s for _, s in known], dtype=np.float64)


BM25_STAGE = FirstStage(name="bm25", title="BM25", pool="BM25 candidates")


def engine_stage(backend: RankerBackend) -> FirstStage:
    return FirstStage(name="engine", title="the engine", pool="the engine's top answers", backend=backend)


def _no_progress(phase: str, fraction: float) -> None:
    pass


@dataclass
class QuestionExample:
    question_id: int
    external_id: str
    candidate_ids: list[str]
    positions: np.ndarray
    features: np.ndarray  # the 12 lexical features (LambdaMART)
    # bm25, rm3, cosine (and engine, engine_rank) per candidate; propagation depends on the fold
    signals: dict[str, np.ndarray]
    targets: np.ndarray  # gain of each candidate, NaN when unrated (unknown, not 0 stars)
    labels: dict[str, int]  # every label of the question, retrieved or not (for ideal DCG)
    vector: np.ndarray | None = None


@dataclass
class TrainingResult:
    uses_model: bool
    label_count: int
    question_count: int
    method: str = "bm25"
    cv_ndcg_model: float | None = None
    cv_ndcg_bm25: float | None = None
    params: dict[str, Any] | None = None
    model_text: str | None = None
    feature_importances: dict[str, float] = field(default_factory=dict)
    details: dict[str, Any] = field(default_factory=dict)
    rated: RatedQuestions | None = None  # what a propagation-using version ranks with


def training_questions(*, collection: Collection) -> list[Question]:
    """Training-split questions of the collection that have at least one label, in id order."""
    ids = labels_for_collection(collection=collection, split=Split.TRAIN).values_list(
        "question_id", flat=True
    )
    return list(
        Question.objects.filter(collection=collection, split=Split.TRAIN, id__in=ids)
        .order_by("id")
        .distinct()
    )


def training_examples(
    *,
    collection: Collection,
    index: CollectionIndex,
    candidates: int,
    answer_vectors: np.ndarray | None = None,
    first_stage: FirstStage = BM25_STAGE,
    vectors_of: VectorsOf | None = None,
) -> list[QuestionExample]:
    """One example per labelled training question: its first-stage candidates, their features and targets.

    The candidates' vectors come from ``vectors_of(positions)`` or, for every answer, ``answer_vectors``;
    neither: no semantic signals.
    """
    if vectors_of is None and answer_vectors is not None:
        full = answer_vectors
        vectors_of = lambda positions: np.asarray(full[positions])  # noqa: E731
    labels: dict[int, dict[str, int]] = {}
    rows = labels_for_collection(collection=collection, split=Split.TRAIN).values_list(
        "question_id", "answer__external_id", "gain"
    )
    for question_id, answer_id, gain in rows:
        labels.setdefault(question_id, {})[answer_id] = gain
    questions = training_questions(collection=collection)
    vectors = question_vectors([q.text for q in questions]) if vectors_of is not None else None
    examples = []
    for i, question in enumerate(questions):
        terms = tokenize(question.text)
        positions, bm25, first_scores = first_stage.candidates(index, question, terms, candidates)
        ids = [index.ids[p] for p in positions]
        known = labels[question.pk]
        vector = vectors[i] if vectors is not None else None
        names = ("bm25", "rm3", *first_stage.signals) + (("cosine",) if vector is not None else ())
        signals = candidate_signals(
            index,
            index.term_ids(terms),
            positions,
            bm25,
            names=names,
            question_vector=vector,
            candidate_vectors=vectors_of(positions)
            if vectors_of is not None and vector is not None
            else None,
            engine_scores=first_scores,
        )
        examples.append(
            QuestionExample(
                question_id=question.pk,
                external_id=question.external_id,
                candidate_ids=ids,
                positions=positions,
                features=candidate_features(index, terms, positions, bm25),
                signals={name: signals[:, j] for j, name in enumerate(names)},
                targets=np.array([known.get(a, np.nan) for a in ids], dtype=np.float64),
                labels=known,
                vector=vector,
            )
        )
    return examples


def rated_questions(examples: list[QuestionExample], index: CollectionIndex) -> RatedQuestions:
    """The examples' vectors and stars over the index's answer positions (for propagation)."""
    rows, columns, stars = [], [], []
    for row, example in enumerate(examples):
        for answer_id, gain in example.labels.items():
            position = index.position.get(answer_id)
            if position is not None:
                rows.append(row)
                columns.append(position)
                stars.append(float(gain))
    gains = sparse.csr_matrix((stars, (rows, columns)), shape=(len(examples), index.size), dtype=np.float64)
    vectors = (
        np.vstack([e.vector for e in examples if e.vector is not None]) if examples else np.zeros((0, 384))
    )
    return RatedQuestions(vectors=vectors, gains=gains, question_ids=tuple(e.question_id for e in examples))


def _propagation(example: QuestionExample, rated: RatedQuestions) -> np.ndarray:
    """Stars that the other rated questions gave this example's candidates (never its own)."""
    assert example.vector is not None
    if rated.vectors.shape[0] == 0:
        return np.zeros(len(example.positions))
    return propagation_scores(
        example.vector[None, :],
        rated.vectors,
        rated.gains[:, example.positions],
        exclude=np.array([rated.without(example.question_id)]),
        top_n=PROPAGATION_NEIGHBOURS,
        power=PROPAGATION_POWER,
    )[0]


def _columns(example: QuestionExample, names: tuple[str, ...], rated: RatedQuestions | None) -> np.ndarray:
    columns = [
        _propagation(example, rated) if name == "propagation" and rated is not None else example.signals[name]
        for name in names
    ]
    return np.column_stack(columns)


def _learnable(example: QuestionExample) -> bool:
    """Whether some rated candidate of the example is relevant (else it has nothing to teach)."""
    return bool(np.any(example.targets > 0))


def _rated_share(rankings: list[list[str]], examples: list[QuestionExample], k: int) -> np.ndarray:
    """Per question: the share of its ranking's top k positions that hold a rated answer."""
    return np.array(
        [
            sum(a in e.labels for a in r[:k]) / max(1, min(k, len(r)))
            for r, e in zip(rankings, examples, strict=True)
        ]
    )


def _ndcg(
    rankings: list[list[str]], examples: list[QuestionExample], *, collection: Collection
) -> np.ndarray:
    """Judged-only NDCG@k of each ranking's top k (``trec_eval -J`` on a run of depth k): unrated answers
    are removed from the k answers a ranker would return, not from all its candidates.

    That is the champion/challenger test's measure (``evaluation.services.versions_compare`` asks each
    version for k answers and condenses those), so cross-validation chooses what the gate will accept.
    Condensing every candidate instead let a learner fill the top k with unrated answers for free: on
    the Cranfield demo over OpenSearch's top 50, LambdaMART led the CV by +0.027 and then lost the test
    by −0.208 (0.197 against the engine's 0.404, 1.3 rated answers in its top 10 against 2.9)."""
    k = collection.ndcg_k
    condensed = [[a for a in r[:k] if a in e.labels] for r, e in zip(rankings, examples, strict=True)]
    arrays = label_arrays(condensed, [e.labels for e in examples])
    return ndcg_at_k(
        arrays.retrieved,
        arrays.ideal,
        collection.ndcg_k,
        gain=cast(Gain, collection.gain_scheme),
        discount=cast(MetricDiscount, collection.discount),
    )


def _order(example: QuestionExample, scores: np.ndarray) -> list[str]:
    # Stable sort: equal scores keep BM25's order.
    return [example.candidate_ids[i] for i in np.argsort(-scores, kind="stable")]


class _Candidate:
    """Something that ranks examples: fit on some (maybe nothing), then score others."""

    name: str = ""
    trained = False

    def fit(self, examples: list[QuestionExample], rated: RatedQuestions | None) -> None:
        pass

    def scores(self, example: QuestionExample, rated: RatedQuestions | None) -> np.ndarray:
        raise NotImplementedError


class _FirstStageOrder(_Candidate):
    """The first stage's own order (BM25's, or the engine's)."""

    def __init__(self, first: str) -> None:
        self.name = first

    def scores(self, example, rated):
        return example.signals[self.name]


class _Fusion(_Candidate):
    name = "fusion"

    def __init__(self, first: str) -> None:
        self.first = first

    def scores(self, example, rated):
        # The same function ranks a "fusion" version's questions (as LinearFusion with equal weights).
        return untrained_fusion(
            example.signals[self.first], example.signals["cosine"], [len(example.candidate_ids)]
        )


class _LearnedFusion(_Candidate):
    name = "learned-fusion"
    trained = True

    def __init__(self, k: int, signals: tuple[str, ...] = LEARNED_SIGNALS) -> None:
        self.k = k
        self.signals = signals
        self.model: LinearFusion | None = None

    def fit(self, examples, rated):
        learnable = [e for e in examples if _learnable(e)]
        features = np.vstack([_columns(e, self.signals, rated) for e in learnable])
        self.model = fit_linear_fusion(
            features,
            np.concatenate([e.targets for e in learnable]),
            [len(e.candidate_ids) for e in learnable],
            ideal_dcg=ideal_dcg_from_labels([e.labels.values() for e in learnable], self.k),
            k=self.k,
            feature_names=self.signals,
            seed=SEED,
        )

    def scores(self, example, rated):
        assert self.model is not None
        return self.model.score(_columns(example, self.signals, rated), [len(example.candidate_ids)])


class _LambdaMart(_Candidate):
    name = "lambdamart"
    trained = True

    def __init__(self, collection: Collection, extra: tuple[str, ...]) -> None:
        self.collection = collection
        self.extra = extra
        self.booster: lgb.Booster | None = None

    def _matrix(self, example, rated):
        if not self.extra:
            return example.features
        return np.hstack([example.features, _columns(example, self.extra, rated)])

    def fit(self, examples, rated):
        # Only rated candidates are lists to learn from; an unrated one is unknown, not 0 stars.
        learnable = [e for e in examples if _learnable(e)]
        known = [~np.isnan(e.targets) for e in learnable]
        self.booster = lambdamart_fit(
            features=np.vstack([self._matrix(e, rated)[m] for e, m in zip(learnable, known, strict=True)]),
            targets=np.concatenate([e.targets[m] for e, m in zip(learnable, known, strict=True)]),
            groups=[int(m.sum()) for m in known],
            params=LAMBDAMART_PARAMS,
            exponential_gain=self.collection.gain_scheme == GainScheme.EXPONENTIAL,
            truncation=self.collection.ndcg_k,
            seed=SEED,
            feature_names=list(FEATURE_NAMES) + list(self.extra),
        )

    def scores(self, example, rated):
        assert self.booster is not None
        return np.asarray(self.booster.predict(self._matrix(example, rated), num_threads=1))


def _folds(n: int, k: int, seed: int) -> list[np.ndarray]:
    order = np.random.default_rng(seed).permutation(n)
    return [order[i::k] for i in range(k)]


def _mean(values: np.ndarray) -> float | None:
    result = mean_ignoring_undefined(values)
    return None if math.isnan(result.mean) else round(result.mean, 6)


def _cross_validate(
    make: Callable[[], _Candidate],
    examples: list[QuestionExample],
    index: CollectionIndex,
    *,
    collection: Collection,
    semantic: bool,
) -> tuple[np.ndarray, list[float], float]:
    """(per-question held-out judged-only NDCG@k averaged over the fold assignments, each assignment's
    mean, the mean share of held-out top-k positions that hold a rated answer)."""
    per_assignment = []
    shares = []
    for seed in FOLD_SEEDS:
        per_question = np.full(len(examples), np.nan)
        for held_out in _folds(len(examples), min(CV_FOLDS, len(examples)), seed):
            held = set(held_out.tolist())
            train_set = [e for i, e in enumerate(examples) if i not in held]
            rated = rated_questions(train_set, index) if semantic else None
            candidate = make()
            if candidate.trained:
                candidate.fit(train_set, rated)
            held_examples = [examples[i] for i in held_out]
            rankings = [_order(e, candidate.scores(e, rated)) for e in held_examples]
            per_question[held_out] = _ndcg(rankings, held_examples, collection=collection)
            shares.append(_rated_share(rankings, held_examples, collection.ndcg_k))
        per_assignment.append(per_question)
    stacked = np.vstack(per_assignment)
    means = [float(np.nanmean(row)) if np.any(~np.isnan(row)) else math.nan for row in stacked]
    # A question without a relevant label has no NDCG in any assignment: it stays NaN (no warning).
    defined = ~np.isnan(stacked)
    counts = defined.sum(axis=0)
    totals = np.where(defined, stacked, 0.0).sum(axis=0)
    share = float(np.concatenate(shares).mean()) if shares else math.nan
    return np.where(counts > 0, totals / np.maximum(counts, 1), np.nan), means, share


def _figures(diff_of: np.ndarray, than: np.ndarray) -> dict[str, float | int]:
    comparison = compare_runs(diff_of, than, n_resamples=2000, n_permutations=2000, seed=SEED)
    return {
        "difference": round(comparison.difference, 6),
        "ci_low": round(comparison.ci_low, 6),
        "ci_high": round(comparison.ci_high, 6),
        "p_value": round(comparison.p_value, 6),
        "questions": comparison.n,
    }


def train(
    *,
    collection: Collection,
    index: CollectionIndex,
    candidates: int,
    progress: Progress = _no_progress,
    first_stage: FirstStage = BM25_STAGE,
) -> TrainingResult:
    """Cross-validate the candidates on the current training labels, choose one, and fit it.

    ``first_stage``: where candidates come from (BM25, or an engine ranker's engine). ``progress(phase,
    fraction)`` hears of each phase (collect-labels, compute-features, cross-validate, fit) as it goes.
    An engine that fails raises its RankerError / RankerUnavailable.
    """
    started = time.perf_counter()
    first = first_stage.name
    progress("collect-labels", 0.0)
    notices: list[str] = []
    progress("compute-features", 0.0)
    vectors_of: VectorsOf | None = None
    try:
        if first_stage.backend is None:
            full = embeddings_build_now(
                collection=collection, index=index, progress=lambda f: progress("compute-features", 0.8 * f)
            )
            vectors_of = lambda positions: np.asarray(full[positions])  # noqa: E731
        else:
            # Only the answers the engine returns are encoded (cached by text hash), never the whole index.
            vectors_of = CandidateVectors(index=index, texts=answer_texts(index=index)).of
        question_vectors(["warm up"])  # the model loads here rather than in the middle of the examples
    except EmbeddingUnavailable as exc:
        vectors_of = None
        notices.append(f"Semantic model unavailable ({exc}); this version uses lexical signals only.")
    semantic = vectors_of is not None
    try:
        examples = training_examples(
            collection=collection,
            index=index,
            candidates=candidates,
            first_stage=first_stage,
            vectors_of=vectors_of,
        )
    except EmbeddingUnavailable as exc:
        notices.append(f"Semantic model unavailable ({exc}); this version uses lexical signals only.")
        semantic = False
        examples = training_examples(
            collection=collection, index=index, candidates=candidates, first_stage=first_stage
        )
    progress("compute-features", 1.0)
    label_count = sum(len(e.labels) for e in examples)
    learnable = [e for e in examples if _learnable(e)]
    result = TrainingResult(uses_model=False, label_count=label_count, question_count=len(examples))
    result.method = first
    first_all = _ndcg([e.candidate_ids for e in examples], examples, collection=collection)
    result.details = {
        "first_stage": first,
        "candidates_depth": candidates,
        "training_questions": len(examples),
        "learnable_questions": len(learnable),
        "feature_version": FEATURE_VERSION,
        "min_cv_gain": MIN_CV_GAIN,
        "semantic": semantic,
        # People (and import accounts) whose ratings of training questions made these labels.
        "raters": Rating.objects.filter(question__collection=collection, question__split=Split.TRAIN)
        .values("rater_id")
        .distinct()
        .count(),
    }
    if notices:
        result.details["message"] = " ".join(notices)
    title = first_stage.title
    if len(learnable) < MIN_QUESTIONS:
        result.cv_ndcg_bm25 = _mean(first_all)
        result.details["reason"] = (
            f"Only {len(learnable)} training questions have a relevant answer among {first_stage.pool}; at "
            f"least {MIN_QUESTIONS} are needed to choose by cross-validation, so this version ranks as "
            f"{title} does."
        )
        result.details["seconds"] = round(time.perf_counter() - started, 3)
        return result

    own = first_stage.signals
    extra = (*own, *EXTRA_LAMBDAMART) if semantic else (*own, "rm3")
    learned = (*own, *LEARNED_SIGNALS)
    untrained = (first, "fusion")
    makers: dict[str, Callable[[], _Candidate]] = {first: lambda: _FirstStageOrder(first)}
    if semantic:
        makers["fusion"] = lambda: _Fusion(first)
        makers["learned-fusion"] = lambda: _LearnedFusion(collection.ndcg_k, learned)
    makers["lambdamart"] = lambda: _LambdaMart(collection, extra)
    per_question: dict[str, np.ndarray] = {}
    scores: dict[str, float] = {}
    table: list[dict[str, Any]] = []
    for step, (name, make) in enumerate(makers.items()):
        progress("cross-validate", step / len(makers))
        values, means, share = _cross_validate(
            make, examples, index, collection=collection, semantic=semantic
        )
        per_question[name] = values
        mean = _mean(values)
        scores[name] = mean if mean is not None else -1.0
        table.append(
            {
                "name": name,
                "trained": name not in untrained,
                "cv_ndcg": mean,
                "spread": round(max(means) - min(means), 6) if means else None,
                "per_assignment": [round(m, 6) for m in means],
                "rated_share": round(share, 4),
            }
        )
    # Among equals, the first stage: the simplest ranking.
    best_untrained = max((n for n in scores if n in untrained), key=lambda n: (scores[n], n == first))
    best_trained = max((n for n in scores if n not in untrained), key=lambda n: scores[n])
    chosen = best_untrained
    if scores[best_trained] >= scores[best_untrained] + MIN_CV_GAIN:
        chosen = best_trained
    for row in table:
        row["chosen"] = row["name"] == chosen
    result.details["candidates"] = table
    result.details["cv_judged_only"] = True
    result.details["cv_rated_share"] = next(row["rated_share"] for row in table if row["name"] == chosen)
    # What this version adds over its first stage alone (BM25, or the engine as it is).
    result.details["cv_vs_first_stage"] = _figures(per_question[chosen], per_question[first])
    if semantic:
        # What the ratings added: the best candidate that learned from them against the untrained fusion.
        result.details["ratings_added"] = {
            "candidate": best_trained,
            "over": "fusion",
            **_figures(per_question[best_trained], per_question["fusion"]),
        }
    result.cv_ndcg_bm25 = scores[first]
    result.cv_ndcg_model = scores[chosen]
    result.method = chosen
    if chosen != first and chosen == best_untrained:
        result.details["reason"] = (
            f"The best candidate that learned from ratings ({best_trained}, CV NDCG@{collection.ndcg_k} "
            f"{scores[best_trained]:.4f}) did not beat {chosen} ({scores[chosen]:.4f}), which needs no "
            f"ratings, by at least {MIN_CV_GAIN}."
        )
    elif chosen == first:
        result.details["reason"] = f"No candidate beat {title} in cross-validation by at least {MIN_CV_GAIN}."

    progress("fit", 0.0)
    rated = rated_questions(examples, index) if semantic else None
    if chosen == "learned-fusion":
        fusion = _LearnedFusion(collection.ndcg_k, learned)
        fusion.fit(examples, rated)
        assert fusion.model is not None
        result.params = {"signals": list(learned), "weights": list(fusion.model.weights)}
        result.feature_importances = {
            name: round(abs(w), 6) for name, w in zip(learned, fusion.model.weights, strict=True)
        }
        result.rated = rated
        result.uses_model = True
    elif chosen == "fusion":
        result.params = {"signals": [first, "cosine"], "weights": list(UNTRAINED_FUSION_WEIGHTS)}
        result.feature_importances = {first: 0.5, "cosine": 0.5}
        result.uses_model = True
    elif chosen == "lambdamart":
        model = _LambdaMart(collection, extra)
        model.fit(examples, rated)
        assert model.booster is not None
        names = list(FEATURE_NAMES) + list(extra)
        gains = model.booster.feature_importance(importance_type="gain")
        total = float(gains.sum()) or 1.0
        result.feature_importances = {
            n: round(float(g) / total, 6) for n, g in zip(names, gains, strict=True)
        }
        result.params = {**LAMBDAMART_PARAMS, "signals": list(extra)}
        result.model_text = model.booster.model_to_string()
        result.rated = rated if "propagation" in extra else None
        result.uses_model = True
    result.details["seconds"] = round(time.perf_counter() - started, 3)
    return result
