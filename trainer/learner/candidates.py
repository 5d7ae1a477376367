"""The candidates cross-validation chooses among, and the judged-only NDCG@k they are scored by."""

from __future__ import annotations

from typing import Any, cast

import lightgbm as lgb
import numpy as np

from corpus.models import Collection, GainScheme
from evaluation.metrics.ranking import Discount as MetricDiscount
from evaluation.metrics.ranking import Gain, label_arrays, ndcg_at_k
from rankers.features import FEATURE_NAMES
from rankers.fitting import lambdamart_fit
from rankers.fusion import LinearFusion, fit_linear_fusion, ideal_dcg_from_labels, untrained_fusion
from rankers.signals import RatedQuestions

from .examples import QuestionExample, _columns, _learnable

SEED = 20240601
LEARNED_SIGNALS = ("bm25", "cosine", "rm3", "propagation")
LAMBDAMART_PARAMS: dict[str, Any] = {
    "num_leaves": 7,
    "min_data_in_leaf": 20,
    "learning_rate": 0.05,
    "num_iterations": 100,
}
# How deep cross-validation condenses a ranking, in pages of k answers (``_ndcg``).
CV_DEPTH_PAGES = 2


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
    """Judged-only NDCG@k of each ranking's top ``CV_DEPTH_PAGES`` · k (``trec_eval -J`` on a run of that
    depth): the rated answers among the first 2k a ranking returns, in its order, scored at depth k. On a
    ``complete`` question (an imported ground truth) plain NDCG@k: an unlisted answer is 0 stars.

    With c the ranking's rated answers among its top 2k, in rank order, and the collection's gain g and
    discount d:  NDCG@k = Σ_{i ≤ min(k, |c|)} g(c_i) · d(i)  /  IDCG@k from all of the question's labels.

    An unrated answer is unknown, not bad, and how deep a ranking is condensed decides what it is taken
    for (figures: CV of bench_loop's trainings, and the same held-out rankings on the training questions'
    complete judgments):
    - all candidates (before issue 25): an unrated answer is free, rated answers from anywhere below take
      its place, so a learner could fill the top k with answers nobody rated: on the Cranfield demo over
      OpenSearch's top 50, LambdaMART led the CV by +0.027 and then lost the test by −0.208; on
      cranfield-rr's first training LambdaMART would lead the fusion by +0.014, and is 0.094 below it on
      the complete judgments;
    - the top k (the champion/challenger test's run): an unrated answer counts as nothing. The queue
      pools the champion, the latest challenger and BM25, never a candidate only being cross-validated,
      so a learned candidate lost to the fusion whose top k people had rated: on semeval16b
      learned-fusion's top 10 held 52-60% rated answers against the fusion's 82-96%, and the CV put it
      0.013-0.021 below the fusion though it was 0.017-0.019 above on the complete judgments; every
      training kept the fusion;
    - the top 2k: an unrated answer in the top k may give its place to a rated one the ranking itself
      puts on the next page, no further, so a ranking whose top k is mostly unrated still comes up
      short. semeval16b's learned-fusion leads by +0.011 and +0.016 (complete judgments +0.017, +0.019);
      on cranfield-rr, cranfield-original, cacm and cisi the fusion stays ahead, so LambdaMART's losses
      there (0.03-0.11 on the complete judgments) are never made, at the price of learned-fusion's
      smaller gains on the Cranfield editions (+0.012 and +0.013 on the complete judgments, −0.015 to
      −0.004 in CV).
    """
    depth = CV_DEPTH_PAGES * collection.ndcg_k
    # A complete question (an imported judgment, ``examples.training_examples``): its top k as ranked, an
    # unlisted answer 0 stars (plain NDCG@k, trec_eval ndcg_cut.k).
    condensed = [
        r[: collection.ndcg_k] if e.complete else [a for a in r[:depth] if a in e.labels]
        for r, e in zip(rankings, examples, strict=True)
    ]
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
