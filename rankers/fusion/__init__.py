"""Score fusion for reranking: per-question z-scores, an untrained sum, and a learned linear fusion.

Pure numpy, vectorised over questions. Candidates of several questions are given as one array (rows of a
feature matrix) plus ``groups``: the number of candidates of each question, in order (LightGBM's
convention), so question ``g`` owns rows ``offsets[g] : offsets[g + 1]`` with ``offsets = [0, cumsum(groups)]``.

Notation: question ``q`` has candidates ``a = 1..n_q``; ``x_{q,a,f}`` is signal (feature) ``f`` of
candidate ``a``; ``g_{q,a}`` its graded label (0-3 stars; ``scored_ndcg_at_k`` reads an unlabelled one as 0,
``fit_linear_fusion`` takes NaN for it and leaves it out).

* z-score (per question, per signal)::

      z_{q,a,f} = (x_{q,a,f} - mean_a x_{q,a,f}) / std_a x_{q,a,f}      (population std; 0 when std = 0)

  so signals on different scales (BM25 ~ 0-40, cosine -1..1) become comparable within a question, and
  a question whose candidates all tie on a signal gets no push from it.

* untrained fusion: ``s_{q,a} = z_{q,a,bm25} + z_{q,a,cos}`` (equal weights).

* learned linear fusion: ``s_{q,a} = sum_f w_f z_{q,a,f}``, ``w`` learned from the training questions'
  labels (``fit_linear_fusion``): coordinate ascent directly on mean NDCG@k (Metzler & Croft 2007,
  "Linear feature-based models for information retrieval"), or a pairwise logistic loss
  (RankNet with a linear scorer) with L2. See ``fit_linear_fusion`` for which is the default and why.

* the same coordinate ascent over raw (not z-scored) features, weights optionally kept >= 0
  (``fit_linear_weights``): a scorer a search engine can compute itself (``rankers.export``).

* NDCG@k (the learner's objective and the tests' check): :mod:`rankers.ndcg`'s, with linear gain =
  stars and log2 discount::

      DCG@k  = sum_{r=1..k} g_{q,(r)} / log2(r + 1)     (candidates sorted by score, ties by input order)
      NDCG@k = DCG@k / IDCG@k

  where IDCG@k is the DCG of the question's *own* labels sorted best first, taken from ALL its labels
  (pass ``ideal_dcg``; ``ideal_dcg_from_labels`` computes it), not only those among the candidates, so
  a relevant answer that retrieval missed still counts against the question. Questions with IDCG = 0
  have undefined NDCG (NaN) and are left out of means. ``scored_ndcg_at_k`` sorts each question's candidates
  by score and asks :func:`rankers.ndcg.ndcg_at_k`'s DCG; the coordinate ascent computes the same
  figure for many weight vectors at once (``_ndcg_matrix``, dot products: equal up to rounding).

Files: ``groups`` (``groups`` sizes checked and laid out) · ``zscore`` (z-scores, the untrained fusion) ·
``ndcg`` (NDCG@k by question, many scorings at once) · ``linear`` (the learned linear fusion and engine weights)
· ``ascent`` (coordinate ascent on mean NDCG@k, its objective and starts) · ``pairwise`` (the pairwise
logistic fit).
"""

from __future__ import annotations

from rankers.fusion.groups import check_groups
from rankers.fusion.linear import SEED, LinearFusion, fit_linear_fusion, fit_linear_weights
from rankers.fusion.ndcg import ideal_dcg_from_labels, mean_ndcg, rank_within_groups, scored_ndcg_at_k
from rankers.fusion.zscore import FUSION_SIGNALS, UNTRAINED_FUSION_WEIGHTS, untrained_fusion, zscore_by_group

__all__ = [
    "FUSION_SIGNALS",
    "SEED",
    "UNTRAINED_FUSION_WEIGHTS",
    "LinearFusion",
    "check_groups",
    "fit_linear_fusion",
    "fit_linear_weights",
    "ideal_dcg_from_labels",
    "mean_ndcg",
    "rank_within_groups",
    "scored_ndcg_at_k",
    "untrained_fusion",
    "zscore_by_group",
]
