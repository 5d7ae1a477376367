"""Experiment for issue 11: does fusing BM25 with semantic and feedback signals learn from ratings?

On Cranfield, both editions (the R&R demo, 150 questions; the original 225 queries), with the app's
split rule, every method reranks the same BM25 top-``--candidates`` answers of each question and is scored
by NDCG@10 on the TEST questions (linear gain, log2 discount, ideal from all the question's labels;
``evaluation.metrics``), against BM25 with ``evaluation.metrics.stats.compare_runs`` (bootstrap 95% CI of
the difference, paired randomization p-value):

* BM25: the candidates in BM25 order (what the builtin ranker returns untrained);
* cosine: question-answer cosine of all-MiniLM-L6-v2 embeddings alone (``rankers.embedding``);
* untrained fusion: ``z(BM25) + z(cosine)`` per question (``rankers.fusion.untrained_fusion``);
* learned fusion: weights over z-scored BM25, cosine, RM3 (``rankers.rm3``) and rating propagation
  (``rankers.propagation``), learned from the TRAINING questions' labels by the pairwise logistic loss
  (the default; and, for comparison, by coordinate ascent on NDCG@10, bagged or not, and on fewer signals);
  ``--cv`` adds each learner's 5-fold cross-validated NDCG@10 on the training questions (how the
  default was chosen, without looking at the test split);
* LambdaMART (optional, ``--lambdamart``): LightGBM lambdarank on the app's 12 lexical features plus
  cosine, RM3 and propagation, the app's first parameter setting.

Propagation uses training labels only: a training question's feature leaves its own labels out
(as it would be for a new question); a test question's uses all training questions.

Also printed: the learned fusion's gain over the untrained one, a learning curve (25/50/100% of the
training questions, several random subsets), training time, embedding time for the answers, peak RSS.

    DEBUG=1 DATABASE_URL=postgres://postgres@127.0.0.1:5432/wt_learn REDIS_URL=redis://127.0.0.1:6379/13 \
        .venv/bin/python bench/experiment_fusion.py --cranfield-original /work/shared/data/cranfield-original

Collections are created under the slugs bench-cranfield and bench-cranfield-225 and kept for the next
run (``--fresh`` reloads them). Embeddings are cached as .npy files under ``--cache`` (default
/tmp/wt-learn-embeddings), keyed by ``rankers.embedding.text_hash``.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("MODEL_DIR", str(Path(tempfile.gettempdir()) / "wt-learn-models"))

import django  # noqa: E402

django.setup()

from corpus.models import Answer, Collection, Question, Split  # noqa: E402
from corpus.services import split_for  # noqa: E402
from evaluation.metrics.ranking import evaluate_rankings  # noqa: E402
from evaluation.metrics.stats import compare_runs  # noqa: E402
from rankers.builtin import bm25_candidates  # noqa: E402
from rankers.embedding import load_encoder, text_hash  # noqa: E402
from rankers.fusion import (  # noqa: E402
    fit_linear_fusion,
    ideal_dcg_from_labels,
    untrained_fusion,
    zscore_by_group,
)
from rankers.index import load_index  # noqa: E402
from rankers.propagation import propagation_scores  # noqa: E402
from rankers.rm3 import rm3_scores, term_frequency_matrix  # noqa: E402
from rankers.text import tokenize  # noqa: E402
from ratings.selectors import labels_by_question  # noqa: E402
from trainer.services import demo_collection_load  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_ranker import original_cranfield  # noqa: E402

FEATURES = ("bm25", "cosine", "rm3", "propagation")
SEED = 20240601


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# --- data -------------------------------------------------------------------------------------------


def demo_edition(fresh: bool) -> Collection:
    slug = "bench-cranfield"
    if fresh:
        Collection.objects.filter(slug=slug).delete()
    existing = Collection.objects.filter(slug=slug).first()
    if existing is not None and existing.answers.count() == 1400:
        return existing
    Collection.objects.filter(slug=slug).delete()
    demo = demo_collection_load(slug=slug)
    # The split hashes the slug: give the questions the split they have in the app's "cranfield" demo.
    for question in demo.questions.all():
        question.split = split_for(
            collection_slug="cranfield", external_id=question.external_id, test_fraction=0.3
        )
        question.save(update_fields=["split"])
    return demo


def original_edition(directory: Path, fresh: bool) -> Collection:
    slug = "bench-cranfield-225"
    if fresh:
        Collection.objects.filter(slug=slug).delete()
    existing = Collection.objects.filter(slug=slug).first()
    if existing is not None and existing.answers.count() == 1400:
        return existing
    Collection.objects.filter(slug=slug).delete()
    return original_cranfield(directory)


def embed(texts: list[str], cache: Path, batch_size: int, max_tokens: int) -> tuple[np.ndarray, float | None]:
    """Embeddings of ``texts``, from the cache file when it has them all; seconds spent (None if cached)."""
    key = hashlib.sha256("\n".join(text_hash(t, max_tokens) for t in texts).encode()).hexdigest()[:24]
    path = cache / f"{key}.npy"
    if path.exists():
        return np.load(path), None
    started = time.perf_counter()
    vectors = load_encoder(max_tokens=max_tokens).encode(texts, batch_size=batch_size)
    seconds = time.perf_counter() - started
    cache.mkdir(parents=True, exist_ok=True)
    np.save(path, vectors)
    return vectors, seconds


@dataclass
class Edition:
    name: str
    answer_ids: list[str]
    questions: list[Question]
    labels: list[dict[str, int]]  # per question, all its labels (both splits: the test ones only score)
    is_train: np.ndarray
    candidates: list[np.ndarray]  # answer positions, BM25 order
    bm25: list[np.ndarray]
    cosine: list[np.ndarray]
    rm3: list[np.ndarray]
    lexical: list[np.ndarray]  # the app's 12 lexical features (for LambdaMART)
    question_vectors: np.ndarray
    answer_vectors: np.ndarray
    embed_seconds: float | None
    feature_seconds: float


def prepare(collection: Collection, name: str, args) -> Edition:
    from rankers.features import candidate_features

    index = load_index(collection=collection)
    questions = list(Question.objects.filter(collection=collection).order_by("pk"))
    by_question = labels_by_question(question_ids=[q.pk for q in questions])
    texts = dict(Answer.objects.filter(collection=collection).values_list("external_id", "title").order_by())
    bodies = dict(Answer.objects.filter(collection=collection).values_list("external_id", "body"))
    answer_texts = [f"{texts[i]}\n{bodies[i]}".strip() for i in index.ids]
    answer_vectors, embed_seconds = embed(answer_texts, args.cache, args.batch_size, args.max_tokens)
    question_vectors, _ = embed([q.text for q in questions], args.cache, args.batch_size, args.max_tokens)

    started = time.perf_counter()
    # Each answer's title + body term ids, tokenised again here. (This was written when build_index's
    # ``occurrences.sum_duplicates()`` sorted the index's own ``doc_terms`` in place; rankers/index.py
    # has since copied the arrays, INDEX_FORMAT 3, but the experiment keeps its own lists.)
    term_lists = [
        [index.vocab[t] for t in tokenize(texts[i]) + tokenize(bodies[i]) if t in index.vocab]
        for i in index.ids
    ]
    doc_offsets = np.concatenate([[0], np.cumsum([len(t) for t in term_lists])])
    doc_terms = np.fromiter(
        (t for terms in term_lists for t in terms), dtype=np.int64, count=int(doc_offsets[-1])
    )
    vocabulary = len(index.idf)
    lengths = np.diff(doc_offsets)
    average_length = float(lengths.mean())
    candidates, bm25, cosine, rm3, lexical = [], [], [], [], []
    for qi, question in enumerate(questions):
        terms = tokenize(question.text)
        positions, scores = bm25_candidates(index, terms, args.candidates)
        candidates.append(positions)
        bm25.append(scores[positions].astype(np.float64))
        cosine.append(answer_vectors[positions] @ question_vectors[qi])
        feedback = positions[: args.fb_docs]
        candidate_tf = term_frequency_matrix(doc_offsets, doc_terms, positions, vocabulary)
        if qi < 5 and len(positions) > 2:  # check: RM3 with no feedback ranks exactly as BM25 does
            plain = rm3_scores(
                index.term_ids(terms), candidate_tf, candidate_tf[:0], [], index.idf, average_length
            )
            assert np.corrcoef(plain, scores[positions])[0, 1] > 0.999, (plain[:5], scores[positions][:5])
        rm3.append(
            rm3_scores(
                index.term_ids(terms),
                candidate_tf,
                candidate_tf[: len(feedback)],
                scores[feedback],
                index.idf,
                average_length,
                fb_terms=args.fb_terms,
                original_weight=args.rm3_weight,
            )
        )
        if args.lambdamart:
            lexical.append(candidate_features(index, terms, positions, scores))
    return Edition(
        name=name,
        answer_ids=list(index.ids),
        questions=questions,
        labels=[by_question[q.pk] for q in questions],
        is_train=np.array([q.split == Split.TRAIN for q in questions]),
        candidates=candidates,
        bm25=bm25,
        cosine=cosine,
        rm3=rm3,
        lexical=lexical,
        question_vectors=question_vectors,
        answer_vectors=answer_vectors,
        embed_seconds=embed_seconds,
        feature_seconds=time.perf_counter() - started,
    )


# --- methods ----------------------------------------------------------------------------------------


def gain_matrix(edition: Edition, rows: np.ndarray) -> sparse.csr_matrix:
    """(len(rows), answers) stars of the questions at ``rows`` (pass training rows only)."""
    position = {a: i for i, a in enumerate(edition.answer_ids)}
    r, c, v = [], [], []
    for out_row, qi in enumerate(rows):
        for answer, gain in edition.labels[qi].items():
            r.append(out_row)
            c.append(position[answer])
            v.append(gain)
    return sparse.csr_matrix((v, (r, c)), shape=(len(rows), len(edition.answer_ids)), dtype=np.float64)


def propagation(edition: Edition, train_rows: np.ndarray, args) -> list[np.ndarray]:
    """Propagation feature of every question's candidates from the labels of ``train_rows`` only."""
    gains = gain_matrix(edition, train_rows)
    own = {int(q): i for i, q in enumerate(train_rows)}
    exclude = np.array([own.get(qi, -1) for qi in range(len(edition.questions))])
    scores = propagation_scores(
        edition.question_vectors,
        edition.question_vectors[train_rows],
        gains,
        exclude=exclude,
        top_n=args.prop_top,
        power=args.prop_power,
    )
    return [scores[qi, edition.candidates[qi]] for qi in range(len(edition.questions))]


def feature_matrix(edition: Edition, prop: list[np.ndarray], rows: np.ndarray, names=FEATURES):
    columns = {"bm25": edition.bm25, "cosine": edition.cosine, "rm3": edition.rm3, "propagation": prop}
    x = np.vstack([np.column_stack([columns[n][qi] for n in names]) for qi in rows])
    groups = np.array([len(edition.candidates[qi]) for qi in rows])
    return x, groups


def candidate_gains(edition: Edition, rows: np.ndarray) -> np.ndarray:
    return np.concatenate(
        [
            np.array(
                [edition.labels[qi].get(edition.answer_ids[p], 0) for p in edition.candidates[qi]], float
            )
            for qi in rows
        ]
    )


def per_question_ndcg(edition: Edition, rows: np.ndarray, scores: np.ndarray | None) -> np.ndarray:
    """NDCG@10 of the questions at ``rows`` when their candidates are sorted by ``scores`` (None: BM25)."""
    rankings, offset = [], 0
    for qi in rows:
        positions = edition.candidates[qi]
        if scores is None:
            order = np.arange(len(positions))
        else:
            order = np.argsort(-scores[offset : offset + len(positions)], kind="stable")
        offset += len(positions)
        rankings.append([edition.answer_ids[positions[i]] for i in order])
    return evaluate_rankings(rankings, [edition.labels[qi] for qi in rows], k=10).ndcg


def learned(
    edition: Edition,
    train_rows: np.ndarray,
    test_rows: np.ndarray,
    args,
    *,
    names=FEATURES,
    fit: dict | None = None,
):
    """Learn a fusion from the labels of ``train_rows`` only; NDCG@10 of ``test_rows`` under it."""
    prop = propagation(edition, train_rows, args)
    x_train, g_train = feature_matrix(edition, prop, train_rows, names)
    ideal = ideal_dcg_from_labels([edition.labels[qi].values() for qi in train_rows], 10)
    started = time.perf_counter()
    model = fit_linear_fusion(
        x_train,
        candidate_gains(edition, train_rows),
        g_train,
        ideal_dcg=ideal,
        feature_names=names,
        **(fit or {}),
    )
    seconds = time.perf_counter() - started
    x_test, g_test = feature_matrix(edition, prop, test_rows, names)
    return per_question_ndcg(edition, test_rows, model.score(x_test, g_test)), model, seconds


CV_FOLDS = 5
#: The learned variants measured: label -> (features, fit_linear_fusion arguments).
VARIANTS: dict[str, tuple[tuple[str, ...], dict]] = {
    "learned fusion, all 4 signals (pairwise logistic, the default)": (FEATURES, {"method": "pairwise"}),
    "learned fusion, all 4 signals (coord. ascent)": (FEATURES, {"method": "coordinate_ascent"}),
    "learned fusion, all 4 signals (coord. ascent, 10 bags)": (
        FEATURES,
        {"method": "coordinate_ascent", "bags": 10, "restarts": 0},
    ),
    "learned fusion, BM25 + cosine (pairwise)": (("bm25", "cosine"), {"method": "pairwise"}),
    "learned fusion, BM25 + cosine + RM3 (pairwise)": (("bm25", "cosine", "rm3"), {"method": "pairwise"}),
}
MAIN = "learned fusion, all 4 signals (pairwise logistic, the default)"


def cross_validated(edition: Edition, train_rows: np.ndarray, args, *, names, fit) -> np.ndarray:
    """Per-question NDCG@10 of each training question when its fold was held out (folds fixed by SEED).

    The held-out fold is treated as new questions: propagation and the learner see the other folds only.
    """
    order = np.random.default_rng(SEED).permutation(len(train_rows))
    out = np.full(len(train_rows), np.nan)
    for fold in range(CV_FOLDS):
        held = np.sort(order[fold::CV_FOLDS])
        rest = np.setdiff1d(np.arange(len(train_rows)), held)
        out[held], _, _ = learned(edition, train_rows[rest], train_rows[held], args, names=names, fit=fit)
    return out


def lambdamart(edition: Edition, train_rows: np.ndarray, test_rows: np.ndarray, args):
    import lightgbm as lgb

    prop = propagation(edition, train_rows, args)

    def rows_features(rows):
        semantic, groups = feature_matrix(edition, prop, rows, ("cosine", "rm3", "propagation"))
        z = zscore_by_group(semantic, groups)
        return np.hstack([np.vstack([edition.lexical[qi] for qi in rows]), semantic, z]), groups

    x_train, g_train = rows_features(train_rows)
    y = candidate_gains(edition, train_rows)
    keep = []
    offset = 0
    for size in g_train:  # LambdaMART learns nothing from questions without a relevant candidate
        keep.append(y[offset : offset + size].max(initial=0) > 0)
        offset += size
    keep = np.array(keep)
    row_mask = np.repeat(keep, g_train)
    params = {
        "objective": "lambdarank",
        "label_gain": [0, 1, 2, 3],
        "lambdarank_truncation_level": 10,
        "metric": "None",
        "verbosity": -1,
        "num_threads": 1,
        "deterministic": True,
        "force_row_wise": True,
        "seed": SEED,
        "num_leaves": 3,
        "min_data_in_leaf": 20,
        "learning_rate": 0.1,
    }
    started = time.perf_counter()
    booster = lgb.train(params, lgb.Dataset(x_train[row_mask], y[row_mask], group=g_train[keep]), 50)
    seconds = time.perf_counter() - started
    x_test, _ = rows_features(test_rows)
    return per_question_ndcg(edition, test_rows, np.asarray(booster.predict(x_test, num_threads=1))), seconds


# --- report -----------------------------------------------------------------------------------------


def versus(a: np.ndarray, b: np.ndarray) -> str:
    c = compare_runs(a, b, seed=0)
    return f"{c.difference:+.4f} | {c.ci_low:+.4f} … {c.ci_high:+.4f} | {c.p_value:.4f}"


def mean(values: np.ndarray) -> float:
    return float(np.nanmean(values))


def run_edition(edition: Edition, args) -> None:
    train_rows = np.flatnonzero(edition.is_train & np.array([bool(labels) for labels in edition.labels]))
    test_rows = np.flatnonzero(~edition.is_train)
    defined = sum(1 for qi in test_rows if any(g > 0 for g in edition.labels[qi].values()))
    print(
        f"\n## {edition.name}: {len(edition.answer_ids)} answers, {len(train_rows)} labelled training / "
        f"{len(test_rows)} test questions ({defined} with a relevant answer); "
        f"{args.candidates} BM25 candidates"
    )
    if edition.embed_seconds is not None:
        print(f"embedding {len(edition.answer_ids)} answers: {edition.embed_seconds:.1f} s")
    else:
        print("embeddings: from the cache (run with a new --cache directory to time them)")
    print(
        f"BM25 candidates, cosine and RM3 features for all {len(edition.questions)} questions: {edition.feature_seconds:.1f} s"
    )

    bm25 = per_question_ndcg(edition, test_rows, None)
    _, g_test = feature_matrix(edition, edition.bm25, test_rows, ("bm25", "cosine"))
    x_bc, _ = feature_matrix(edition, edition.bm25, test_rows, ("bm25", "cosine"))
    x_rm3, _ = feature_matrix(edition, edition.bm25, test_rows, ("rm3",))
    runs: dict[str, np.ndarray] = {
        "BM25": bm25,
        "cosine alone": per_question_ndcg(edition, test_rows, x_bc[:, 1]),
        "RM3 alone": per_question_ndcg(edition, test_rows, x_rm3[:, 0]),
        "untrained fusion z(BM25)+z(cos)": per_question_ndcg(
            edition, test_rows, untrained_fusion(x_bc[:, 0], x_bc[:, 1], g_test)
        ),
    }
    models = {}
    cv = {}
    for label, (names, fit) in VARIANTS.items():
        runs[label], model, seconds = learned(edition, train_rows, test_rows, args, names=names, fit=fit)
        models[label] = (model, seconds)
        if args.cv:
            cv[label] = cross_validated(edition, train_rows, args, names=names, fit=fit)
    if args.lambdamart:
        runs["LambdaMART, lexical + semantic"], lm_seconds = lambdamart(edition, train_rows, test_rows, args)

    print("\n| method | test NDCG@10 | vs BM25 | 95% CI | p |")
    print("|---|---:|---:|---|---:|")
    for label, values in runs.items():
        if label == "BM25":
            print(f"| BM25 | {mean(values):.4f} | | | |")
        else:
            print(f"| {label} | {mean(values):.4f} | {versus(values, bm25)} |")
    if args.cv:
        cv_bm25 = per_question_ndcg(edition, train_rows, None)
        print(f"\n{CV_FOLDS}-fold CV on the training questions (choosing a learner without the test split):")
        print("| learner | CV NDCG@10 | vs BM25 (same questions) |")
        print("|---|---:|---:|")
        print(f"| BM25 | {mean(cv_bm25):.4f} | |")
        for label, values in cv.items():
            print(f"| {label} | {mean(values):.4f} | {mean(values) - mean(cv_bm25):+.4f} |")
    main = MAIN
    untrained = "untrained fusion z(BM25)+z(cos)"
    print(f"\n{main} vs untrained fusion: {versus(runs[main], runs[untrained])}  (diff | CI | p)")
    for label, (model, seconds) in models.items():
        weights = ", ".join(f"{n} {w:+.3f}" for n, w in zip(model.feature_names, model.weights, strict=True))
        print(
            f"- {label}: weights {weights}; train NDCG@10 {model.details['train_ndcg']:.4f}; fit {seconds:.2f} s"
        )
    if args.lambdamart:
        print(f"- LambdaMART fit: {lm_seconds:.2f} s")

    # Learning curve: random subsets of the labelled training questions (propagation and learner both
    # see only the subset); the test questions are always the same, and so are the subsets of both learners.
    for label in (MAIN, "learned fusion, all 4 signals (coord. ascent)"):
        names, fit = VARIANTS[label]
        print(f"\nlearning curve, {label}: test NDCG@10")
        print(
            "| training questions | runs | mean | sd | min | max | mean vs BM25 | mean vs untrained "
            "| p vs BM25 (per run) | fit s (mean) |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|---:|")
        rng = np.random.default_rng(SEED)
        for fraction in (0.25, 0.5, 1.0):
            repeats = 1 if fraction == 1.0 else args.curve_runs
            results, ps, fit_seconds = [], [], []
            for _ in range(repeats):
                count = max(2, round(fraction * len(train_rows)))
                subset = (
                    np.sort(rng.choice(train_rows, size=count, replace=False)) if fraction < 1 else train_rows
                )
                values, _, seconds = learned(edition, subset, test_rows, args, names=names, fit=fit)
                results.append(mean(values))
                ps.append(compare_runs(values, bm25, seed=0).p_value)
                fit_seconds.append(seconds)
            r = np.array(results)
            print(
                f"| {fraction:.0%} ({round(fraction * len(train_rows))}) | {repeats} | {r.mean():.4f} | "
                f"{r.std():.4f} | {r.min():.4f} | {r.max():.4f} | {r.mean() - mean(bm25):+.4f} | "
                f"{r.mean() - mean(runs[untrained]):+.4f} | {', '.join(f'{p:.3f}' for p in ps)} | "
                f"{np.mean(fit_seconds):.2f} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cranfield-original", type=Path)
    parser.add_argument("--fresh", action="store_true", help="reload the collections")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "wt-learn-embeddings")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--max-tokens", type=int, default=128, help="embedding truncation (word pieces)")
    parser.add_argument("--candidates", type=int, default=100)
    parser.add_argument("--fb-docs", type=int, default=10)
    parser.add_argument("--fb-terms", type=int, default=10)
    parser.add_argument("--rm3-weight", type=float, default=0.5)
    parser.add_argument("--prop-top", type=int, default=10)
    parser.add_argument("--prop-power", type=float, default=2.0)
    parser.add_argument("--curve-runs", type=int, default=5, help="random subsets per fraction")
    parser.add_argument("--lambdamart", action="store_true")
    parser.add_argument(
        "--cv", action="store_true", help="also cross-validate each learner on the training split"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    print(f"CPUs {os.cpu_count()}; MODEL_DIR {os.environ['MODEL_DIR']}; embedding cache {args.cache}")
    editions = [(demo_edition(args.fresh), "Cranfield, R&R demo edition (150 q)")]
    if args.cranfield_original:
        editions.append(
            (original_edition(args.cranfield_original, args.fresh), "Cranfield, original 225 queries")
        )
    for collection, name in editions:
        run_edition(prepare(collection, name, args), args)
    print(f"\npeak RSS {peak_mb():.0f} MB; total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
