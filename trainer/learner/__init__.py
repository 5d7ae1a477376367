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
- cross-validation scores a held-out question on its **condensed** top 2k (``CV_DEPTH_PAGES`` pages of
  k): the 2k answers the ranking would return, unrated ones removed, then NDCG@k, i.e. judged-only NDCG
  as ``trec_eval -J -m ndcg_cut.k`` computes it on a run of depth 2k (chosen over reading the certainty
  page's relevance estimates because it needs no model of the raters and is what trec_eval defines;
  ``bench/bench_loop.py`` measures the result on the product's own loop). Not the champion/challenger
  test's depth k: the queue pools the champion's, the latest challenger's and BM25's top k, never a
  candidate only being cross-validated, so at depth k a learned candidate's unrated answers counted as
  nothing and the fusion was kept wherever its top k was the rated one (``candidates._ndcg`` has the
  figures); a candidate chosen here becomes the challenger, the queue pools its top k, and the test then
  measures it on rated answers;
- except on a question judged by an import (a ground truth, R&R's or TREC qrels) whose option "answers
  not listed for a judged question are incorrect" is on (``GroundTruthImport.unlisted_incorrect``, the
  default, reversible on the manage page and in the API; ``complete``): the import lists the answers that
  matter, so an unlisted candidate is 0 stars in the fit and in the CV (plain NDCG@k of the top k), as R&R
  and trec_eval read a ground truth; the version's details name the imports (``unlisted_incorrect``). The Cranfield demo's ground truth
  rates 30% of BM25's top 10; read as unknown, the learners never saw an irrelevant answer and the learned
  fusion was 0.119 below BM25 on the 75 Cranfield queries the demo does not have, read as 0 stars it is
  0.043 above (the fusion: 0.028; ``bench/bench_demo_generalise.py``). Ratings people give through the
  queue, and imports with the option off, never make a question complete, so learning from them is as above;
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
never loses, in cross-validation, to what needed no ratings. Among the trained ones, LambdaMART is
preferred to the learned fusion only when it leads it by ``MIN_CV_GAIN`` too (the simpler among equals;
``training.choose``). Without embeddings (model package missing or broken) the semantic candidates are
left out and the version says so.

Training is deterministic for given labels (fixed seeds, one thread).

The package's modules:

* :mod:`.stages` – the first stage (``FirstStage``): BM25, or an engine or ranker service, and its candidates.
* :mod:`.examples` – the labelled training questions as examples (candidates, signals, features, targets).
* :mod:`.candidates` – the candidates (bm25 or engine, fusion, learned-fusion, lambdamart), judged-only NDCG@k.
* :mod:`.cross_validation` – cross-validation over fold assignments and the figures comparing two candidates.
* :mod:`.training` – ``train``: cross-validate, choose under the guard, fit; ``TrainingResult``.
"""

from .candidates import CV_DEPTH_PAGES, LAMBDAMART_PARAMS, LEARNED_SIGNALS, SEED
from .cross_validation import CV_FOLDS, FOLD_SEEDS
from .examples import QuestionExample, VectorsOf, rated_questions, training_examples, training_questions
from .stages import BM25_STAGE, FirstStage, engine_stage
from .training import EXTRA_LAMBDAMART, MIN_CV_GAIN, MIN_QUESTIONS, Progress, TrainingResult, choose, train

__all__ = [
    "BM25_STAGE",
    "CV_DEPTH_PAGES",
    "CV_FOLDS",
    "EXTRA_LAMBDAMART",
    "FOLD_SEEDS",
    "LAMBDAMART_PARAMS",
    "LEARNED_SIGNALS",
    "MIN_CV_GAIN",
    "MIN_QUESTIONS",
    "SEED",
    "FirstStage",
    "Progress",
    "QuestionExample",
    "TrainingResult",
    "VectorsOf",
    "choose",
    "engine_stage",
    "rated_questions",
    "train",
    "training_examples",
    "training_questions",
]
