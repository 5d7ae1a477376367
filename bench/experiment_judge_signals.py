"""Experiment for the builtin judge: which offline signal tracks people's grades on the Cranfield demo?

Builds a fresh database (default ``rt_experiment_judge``) with the Cranfield demo, then for every pair
people rated computes, with the app's code (``rankers.index``, ``rankers.semantic``,
``rankers.propagation``):

* ratio: the answer's BM25 over the question's best (what ``judges.builtin`` grades by);
* logrank: −log of the answer's BM25 rank among all answers for the question;
* prop: ``propagation_scores`` with TRAINING questions' stars (the learned-fusion signal);
* propmean: prop ÷ the same sum with every rated pair counted 1: the similarity-weighted mean stars of
  the neighbouring training questions that rated this answer (their global mean where none did);
* prior: the answer's mean stars from the other training questions (shrunk towards the global mean);
* lstsq: least squares of the stars on all the z-scored signals above (fitted on training pairs).

Figures and conclusions: bench/README.md ("Other offline signals for the builtin judge").

Held out: each signal's thresholds are calibrated (``judges.builtin.calibrate``, quantile matching) on
the TRAINING questions' labels only (propagation leaves each training question itself out), and
agreement (weighted κ, ordinal α, same grade, leniency) is measured on the TEST questions' labels.

    .venv/bin/python bench/experiment_judge_signals.py [--pg postgres://postgres@127.0.0.1:5432]
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


TIE_BREAK = 0.001  # the BM25 ratio (0 … 1) only orders pairs with the same propagation mean
FOLDS = 5


def cross_validate(
    pairs, y, vectors, row, index, ratio, calibrate, grade, kappa, alpha_of, propagation
) -> None:
    """Both judges over FOLDS folds of all questions (question i in fold i mod FOLDS, in id order): each
    fold's pairs graded with the other folds as the training questions (their labels calibrate and
    propagate), the grades of all folds pooled."""
    import numpy as np
    from scipy import sparse

    fold = np.array([row[p.question_id] % FOLDS for p in pairs])
    ratio = np.asarray(ratio)
    graded: dict[str, np.ndarray] = {"ratio": np.zeros(len(y), int), "propmean+ratio": np.zeros(len(y), int)}
    for f in range(FOLDS):
        train_rows = np.array(
            sorted({row[p.question_id] for p, k in zip(pairs, fold, strict=True) if k != f})
        )
        position_of = {r: i for i, r in enumerate(train_rows)}
        gains = sparse.lil_matrix((len(train_rows), index.size))
        rated = sparse.lil_matrix((len(train_rows), index.size))
        for p, k in zip(pairs, fold, strict=True):
            if k != f:
                gains[position_of[row[p.question_id]], index.position[p.answer_external_id]] = p.stars
                rated[position_of[row[p.question_id]], index.position[p.answer_external_id]] = 1
        exclude = np.array([position_of.get(r, -1) for r in range(len(vectors))])
        prop = propagation(vectors, vectors[train_rows], sparse.csr_matrix(gains), exclude=exclude)
        seen = propagation(vectors, vectors[train_rows], sparse.csr_matrix(rated), exclude=exclude)
        overall = float(y[fold != f].mean())
        cells = (
            [row[p.question_id] for p in pairs],
            [index.position[p.answer_external_id] for p in pairs],
        )
        p_, s_ = prop[cells], seen[cells]
        mean = np.where(s_ > 0, p_ / np.where(s_ > 0, s_, 1), overall) + TIE_BREAK * ratio
        for name, score in (("ratio", ratio), ("propmean+ratio", mean)):
            thresholds = calibrate(score[fold != f], y[fold != f])
            graded[name][fold == f] = [grade(v, thresholds) for v in score[fold == f]]
    print(f"{FOLDS}-fold cross-validation over all {len(y)} pairs (grades of each fold pooled):")
    for name, g in graded.items():
        alpha = alpha_of([[int(a), int(b)] for a, b in zip(y, g, strict=True)], level="ordinal")
        print(f"   {name:<15} kappa {kappa(y, g):.3f}  alpha {alpha:.3f}  same {np.mean(g == y):.3f}  "
              f"leniency {np.mean(g - y):+.3f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pg", default="postgres://postgres@127.0.0.1:5432")
    parser.add_argument("--database", default="rt_experiment_judge")
    args = parser.parse_args()
    from bench.bench_judge import fresh_database

    os.environ.update(DATABASE_URL=fresh_database(args.pg, args.database), DEBUG="1", SECRET_KEY="x",
                      DJANGO_SETTINGS_MODULE="config.settings", LOG_LEVEL="WARNING")  # fmt: skip
    import django

    django.setup()
    import numpy as np
    from django.core.management import call_command
    from scipy import sparse
    from scipy.stats import spearmanr

    from corpus.models import Question
    from judges.builtin import calibrate, grade
    from judges.selectors import human_labelled_pairs
    from judges.stats.kappa import weighted_kappa
    from rankers.index import load_index
    from rankers.propagation import propagation_scores
    from rankers.semantic import question_vectors
    from rankers.text import tokenize
    from ratings.agreement import krippendorff_alpha
    from trainer.services import demo_collection_load

    call_command("migrate", verbosity=0)
    collection = demo_collection_load(slug="cranfield")
    index = load_index(collection=collection)
    pairs = human_labelled_pairs(collection=collection)
    split = dict(Question.objects.filter(collection=collection).values_list("pk", "split"))
    question_ids = sorted({p.question_id for p in pairs})
    text = {p.question_id: p.question for p in pairs}
    row = {q: i for i, q in enumerate(question_ids)}
    vectors = question_vectors([text[q] for q in question_ids])
    train = [q for q in question_ids if split[q] == "train"]
    gains = sparse.lil_matrix((len(question_ids), index.size))
    rated = sparse.lil_matrix((len(question_ids), index.size))
    for p in pairs:
        if split[p.question_id] == "train":
            gains[row[p.question_id], index.position[p.answer_external_id]] = p.stars
            rated[row[p.question_id], index.position[p.answer_external_id]] = 1
    rows = np.array([row[q] for q in train])
    exclude = np.array([train.index(q) if q in train else -1 for q in question_ids])
    prop = propagation_scores(vectors, vectors[rows], sparse.csr_matrix(gains)[rows], exclude=exclude)
    seen = propagation_scores(vectors, vectors[rows], sparse.csr_matrix(rated)[rows], exclude=exclude)
    train_stars = [p.stars for p in pairs if split[p.question_id] == "train"]
    overall = float(np.mean(train_stars))
    got: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for p in pairs:
        if split[p.question_id] == "train":
            got[p.answer_external_id].append((p.question_id, p.stars))
    bm25: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    columns: dict[str, list[float]] = defaultdict(list)
    for p in pairs:
        if p.question_id not in bm25:
            raw = np.asarray(index.scores("both", tokenize(p.question)), dtype=np.float64)
            rank = np.empty(len(raw))
            rank[np.argsort(-raw, kind="stable")] = np.arange(1, len(raw) + 1)
            bm25[p.question_id] = (raw / raw.max(), rank)
        ratio, rank = bm25[p.question_id]
        position, r = index.position[p.answer_external_id], row[p.question_id]
        others = [s for q, s in got[p.answer_external_id] if q != p.question_id]
        columns["ratio"].append(ratio[position])
        columns["logrank"].append(-np.log(rank[position]))
        columns["prop"].append(prop[r, position])
        columns["propmean"].append(
            prop[r, position] / seen[r, position] if seen[r, position] > 0 else overall
        )
        columns["prior"].append((sum(others) + overall) / (len(others) + 1))
    columns["propmean+ratio"] = [
        m + TIE_BREAK * r for m, r in zip(columns["propmean"], columns["ratio"], strict=True)
    ]
    y = np.array([p.stars for p in pairs])
    test = np.array([split[p.question_id] == "test" for p in pairs])
    signals = {name: np.array(values) for name, values in columns.items()}
    z = np.column_stack(
        [(v - v[~test].mean()) / v[~test].std() for v in signals.values()] + [np.ones(len(y))]
    )
    weights, *_ = np.linalg.lstsq(z[~test], y[~test], rcond=None)
    signals["lstsq"] = z @ weights
    signals["propmean+ratio"] = signals.pop("propmean+ratio")
    print(f"{len(pairs)} pairs people rated: {int((~test).sum())} of {len(train)} training questions "
          f"(calibration), {int(test.sum())} of {len(question_ids) - len(train)} test questions (measured)")  # fmt: skip
    print(f"{'signal':<10} {'Spearman':>9} {'kappa':>7} {'alpha':>7} {'same':>6} {'leniency':>9}  thresholds")
    for name, values in signals.items():
        thresholds = calibrate(values[~test], y[~test])
        g = np.array([grade(v, thresholds) for v in values[test]])
        alpha = krippendorff_alpha(
            [[int(a), int(b)] for a, b in zip(y[test], g, strict=True)], level="ordinal"
        )
        print(f"{name:<10} {spearmanr(values[test], y[test])[0]:>9.3f} {weighted_kappa(y[test], g):>7.3f} "
              f"{alpha:>7.3f} {np.mean(g == y[test]):>6.3f} {np.mean(g - y[test]):>+9.3f}  "
              f"{', '.join(f'{t:.3f}' for t in thresholds)}")  # fmt: skip
    # The propagation mean ties most pairs at the overall mean: the same thresholds, ties going down.
    thresholds = calibrate(signals["propmean"][~test], y[~test])
    g = np.array([sum(v > t for t in thresholds) for v in signals["propmean"][test]])
    alpha = krippendorff_alpha([[int(a), int(b)] for a, b in zip(y[test], g, strict=True)], level="ordinal")
    print(f"propmean, ties going down: kappa {weighted_kappa(y[test], g):.3f}  alpha {alpha:.3f}  "
          f"same {np.mean(g == y[test]):.3f}  leniency {np.mean(g - y[test]):+.3f}")  # fmt: skip
    cross_validate(pairs, y, vectors, row, index, columns["ratio"], calibrate, grade, weighted_kappa,
                   krippendorff_alpha, propagation_scores)  # fmt: skip
    print(f"test pairs with a neighbouring training question that rated the answer: "
          f"{int((seen[[row[p.question_id] for p in pairs], [index.position[p.answer_external_id] for p in pairs]][test] > 0).sum())}")  # fmt: skip


if __name__ == "__main__":
    main()
