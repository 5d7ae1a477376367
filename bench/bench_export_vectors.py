"""The export with the answers' vectors in the engine (issue 35 §1; not a test; see bench/README.md,
"Exports with the vectors in the engine").

    make engines && .venv/bin/python bench/bench_export_vectors.py [--collections cranfield-rr,adi,...]

For the Cranfield demo and each outside collection (../shared/data/outside: imported with all their
judgments as labels, the split bench_loop's, half the questions for test), and for each engine (a real
OpenSearch node with the k-NN plugin, a real Solr node, started as the tests start them): the collection's
answers are indexed, an engine ranker is made and trained (``trainer.services.ranker_train``: the
engine's top 50 reranked by the app's model, with embeddings), and its version's export is fitted with
that training (``trainer.engine_export``: the answers' vectors written into the engine, the ``vector``
feature in the linear model). Printed, on the test questions that have a relevant answer:

- the export's own figures (NDCG@10 on rated answers, the app's comparison measure): engine alone,
  export as the app ranks, export run by the engine, the served reranker (the version), parity, and
  ``cost`` (version − export);
- the same rankings scored on the complete judgments (an answer the judgments do not list: 0 stars):
  engine alone, served reranker (the version as ``ranker_server`` serves it), the exported search run by
  the engine (the question's vector filled in as a user sends it), the gap export − served, and the sign
  of ``cost`` there, against the sign of the export's own ``cost``;
- what the rule of ``trainer.export_cost`` reads (the rated shares of the version's and the export's top
  10s, the cost's 95% interval, the unrated answers of both) and what the app shows: the cost, "within
  noise" or "not measurable yet" ("WRONG SIGN SHOWN" when a cost it shows has the opposite sign of the
  complete judgments'); the version's five largest feature importances;
- with ``--propagation``, ``propagation_experiment`` (its docstring).
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_loop as loop  # noqa: E402 - sets Django up, with its own database
import numpy as np  # noqa: E402

from corpus.formats.records import AnswerRecord, JudgmentRecord, QuestionRecord  # noqa: E402
from corpus.models import Collection, Split  # noqa: E402
from corpus.services import collection_create  # noqa: E402
from evaluation.metrics.stats import compare_runs  # noqa: E402
from evaluation.services import rated_share, score_rankings  # noqa: E402
from rankers.backends import RankQuery, get_backend  # noqa: E402
from rankers.engine import EngineBackend  # noqa: E402
from rankers.engine_config import validate_engine_config  # noqa: E402
from rankers.export.fetch import EngineFeatures  # noqa: E402
from rankers.export.linear import fit_export_linear, linear_scores  # noqa: E402
from rankers.export.model import ExportedSearch  # noqa: E402
from rankers.export.render import render  # noqa: E402
from rankers.fusion import ideal_dcg_from_labels  # noqa: E402
from rankers.propagation import propagation_scores  # noqa: E402
from rankers.semantic import question_vectors  # noqa: E402
from rankers.services import ranker_create  # noqa: E402
from ratings.models import Label  # noqa: E402
from ratings.selectors import complete_question_ids  # noqa: E402
from trainer.demo_vectors import demo_vectors_seed  # noqa: E402
from trainer.engine_export.questions import _fetch, _gain, _labelled  # noqa: E402
from trainer.export_cost import export_cost  # noqa: E402
from trainer.services import collection_import, demo_collection_load, ranker_train  # noqa: E402

COLLECTIONS = ("cranfield-rr", "adi", "covidfaq", "cisi", "cacm", "semeval16b")


def outside(name: str) -> tuple[Collection, dict[str, dict[str, int]]]:
    """An outside collection with every judgment imported as labels (bench_loop's split and stars)."""
    directory = loop.DEFAULT_OUTSIDE / name
    rows = loop._read_tsv
    answers = [AnswerRecord(r[0], "", r[1] if len(r) > 1 else "") for r in rows(directory / "answers.tsv")]
    questions = [
        QuestionRecord(
            r[0],
            r[1] if len(r) > 1 else "",
            Split.TEST if loop._hash_position("bench-loop", 0, name, r[0]) < 0.5 else Split.TRAIN,
        )
        for r in rows(directory / "questions.tsv")
    ]
    qrels = [(r[0], r[1], int(r[2])) for r in rows(directory / "qrels.tsv")]
    stars_of = {0: 0, 1: 2, 2: 3} if max(g for _, _, g in qrels) > 1 else {0: 0, 1: 3}
    truth: dict[str, dict[str, int]] = {}
    for qid, aid, grade in qrels:
        truth.setdefault(qid, {})[aid] = stars_of[grade]
    collection = collection_create(name=f"export {name}", slug=f"export-{name}")
    collection_import(
        collection=collection,
        answers=answers,
        questions=questions,
        judgments=[JudgmentRecord(q, a, s) for q, judged in truth.items() for a, s in judged.items()],
    )
    return collection, truth


def demo() -> tuple[Collection, dict[str, dict[str, int]]]:
    demo_vectors_seed()
    collection = demo_collection_load()
    assert collection is not None
    truth: dict[str, dict[str, int]] = {}
    for qid, aid, gain in Label.objects.filter(question__collection=collection).values_list(
        "question__external_id", "answer__external_id", "gain"
    ):
        truth.setdefault(qid, {})[aid] = gain
    return collection, truth


def propagation_experiment(
    collection: Collection, config: dict, model: dict, scorer: loop.TruthScorer
) -> str:
    """``--propagation``: can the linear export copy what the served trees learn from ``propagation``
    (stars similar training questions gave the answer, ``rankers.propagation``)? The export's own
    features fetched from the engine for the training and the test questions, then the linear model
    refitted with one more column, as the export fits (``rated``: judged-only top k over rated candidates)
    and with the unlisted answers of a complete question at 0 stars (``unlisted 0``):

    - ``centroid``: (1 + cos(v(q), p_a)) / 2 with p_a = Σ_j stars_j(a) · v(q_j) over the training
      questions j (0 for an answer no training question rated above 0): a second vector per answer, which
      the engine could hold and score as it scores ``vector`` (leave-one-out on the training rows);
    - ``propagation``: the app's own feature (top 10 neighbours, power 2), which the engine cannot
      compute: the reference.

    NDCG@k on complete judgments of the test questions with a relevant answer."""
    features = model["features"]
    fetcher = EngineFeatures(config=validate_engine_config(config), features=features)
    window, k = model["window"], collection.ndcg_k
    try:
        train = _fetch(
            fetcher,
            _labelled(collection, Split.TRAIN),
            window,
            lambda f: None,
            complete_question_ids(collection=collection, split=Split.TRAIN),
            vectors=True,
        )
        train = [q for q in train if any(q.labels.get(a, 0) > 0 for a in q.candidates.ids)]
        test = [fetcher.candidates(q.text, window, question_vectors([q.text])[0]) for q in scorer.questions]
    finally:
        fetcher.close()
    test_vectors = np.vstack([question_vectors([q.text])[0] for q in scorer.questions])
    train_vectors = np.vstack([q.vector for q in train])
    answers = sorted(
        {a for q in train for a in [*q.labels, *q.candidates.ids]} | {a for c in test for a in c.ids}
    )
    column = {a: i for i, a in enumerate(answers)}
    gains = np.zeros((len(train), len(answers)))
    for i, q in enumerate(train):
        for a, stars in q.labels.items():
            gains[i, column[a]] = stars
    centroids = gains.T @ train_vectors  # (answers, dims): p_a

    def centroid(vectors: np.ndarray, ids: list[str], own: int | None) -> np.ndarray:
        rows = centroids[[column[a] for a in ids]]
        if own is not None:
            rows = rows - np.outer(gains[own, [column[a] for a in ids]], train_vectors[own])
        norms = np.linalg.norm(rows, axis=1)
        cos = (rows @ vectors) / np.where(norms > 0, norms, 1.0)
        return np.where(norms > 0, (1 + cos) / 2, 0.0)

    prop_train = propagation_scores(train_vectors, train_vectors, gains, exclude=np.arange(len(train)))
    prop_test = propagation_scores(test_vectors, train_vectors, gains)
    extra = {
        "none": (lambda i, q: np.zeros((len(q.candidates.ids), 0)), lambda i, c: np.zeros((len(c.ids), 0))),
        "centroid": (
            lambda i, q: centroid(q.vector, q.candidates.ids, i)[:, None],
            lambda i, c: centroid(test_vectors[i], c.ids, None)[:, None],
        ),
        "propagation": (
            lambda i, q: prop_train[i, [column[a] for a in q.candidates.ids]][:, None],
            lambda i, c: prop_test[i, [column[a] for a in c.ids]][:, None],
        ),
    }
    fits = {
        "rated": [np.array([q.labels.get(a, np.nan) for a in q.candidates.ids]) for q in train],
        "unlisted 0": [
            np.array([q.labels.get(a, 0.0 if q.complete else np.nan) for a in q.candidates.ids])
            for q in train
        ],
    }
    ideal = ideal_dcg_from_labels(
        [_gain(np.array(list(q.labels.values()), float), collection) for q in train], k
    )
    out = []
    for (variant, (train_extra, test_extra)), (fit, stars) in itertools.product(extra.items(), fits.items()):
        weights, _ = fit_export_linear(
            np.vstack([np.hstack([q.candidates.values, train_extra(i, q)]) for i, q in enumerate(train)]),
            _gain(np.concatenate(stars), collection),
            [len(q.candidates.ids) for q in train],
            ideal_dcg=ideal,
            k=k,
        )
        rankings = []
        for i, c in enumerate(test):
            scores = linear_scores(np.hstack([c.values, test_extra(i, c)]), weights)
            rankings.append([c.ids[j] for j in np.argsort(-scores, kind="stable")][:k])
        ndcg = float(
            np.mean(score_rankings(run=scorer.definition, rankings=rankings, labels=scorer.labels).ndcg)
        )
        out.append(f"{variant} ({fit}) {ndcg:.4f} (last weight {weights[-1]:.3g})")
    return "linear refit, complete judgments: " + ", ".join(out)


SIMULATED_SHARES = (0.25, 0.4, 0.5, 0.6, 0.75)


def rated_sign_check(
    scorer: loop.TruthScorer, served: list[list[str]], export: list[list[str]], cost_complete: float
) -> str:
    """What the cost's rule would show after raters rate more of the test questions' top 10s: the unrated
    answers of the served version's and the export's top 10s are rated (with their complete judgment: an
    unlisted answer is 0 stars) in a fixed random order until both rated shares reach s; then ``cost`` on
    rated answers, its 95% interval and what ``trainer.export_cost`` shows, against the sign on complete
    judgments ("ok", "WRONG", "noise": within noise, so no cost shown)."""
    k = scorer.collection.ndcg_k
    labels = [dict(known) for known in scorer.labels]
    unrated = sorted(
        {
            (i, a)
            for i, known in enumerate(labels)
            for r in (served, export)
            for a in r[i][:k]
            if a not in known
        }
    )
    order = np.random.default_rng(0).permutation(len(unrated))
    done, out = 0, []
    for share in SIMULATED_SHARES:
        while min(rated_share(served, labels, k), rated_share(export, labels, k)) < share and done < len(
            order
        ):
            i, a = unrated[order[done]]
            labels[i][a] = 0
            done += 1
        a_q = score_rankings(run=scorer.definition, rankings=served, labels=labels, rated_only=True).ndcg
        b_q = score_rankings(run=scorer.definition, rankings=export, labels=labels, rated_only=True).ndcg
        c = compare_runs(
            np.asarray(a_q, float), np.asarray(b_q, float), n_resamples=2000, n_permutations=2000, seed=0
        )
        shown = not (c.ci_low <= 0 <= c.ci_high)
        verdict = ("ok" if np.sign(c.difference) == np.sign(cost_complete) else "WRONG") if shown else "noise"
        out.append(
            f"{share:.2f}: +{done} rated, cost {c.difference:+.4f} [{c.ci_low:+.4f}, {c.ci_high:+.4f}] {verdict}"
        )
    return "; ".join(out)


def measure(
    name: str,
    engine: str,
    collection: Collection,
    truth: dict[str, dict[str, int]],
    propagation: bool = False,
) -> None:
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=loop.VAR_DIR) as tmp:
        node = loop.engine_start(engine, Path(tmp) / engine, loop.engine_documents(collection, name))
        try:
            config = {**node.config, "retries": 0}
            ranker = ranker_create(
                collection=collection, name=f"{name} {engine}", kind="engine", config=config
            )
            version = ranker_train(ranker=ranker)
            model = version.details.get("export") or {}
            if "figures" not in model:
                print(f"{name:<11} {engine:<10} no export: {model.get('error', model)}", flush=True)
                return
            f = model["figures"]
            scorer = loop.TruthScorer(collection, truth)
            cleaned = validate_engine_config(config)
            fmt = "opensearch-rescore" if engine == "opensearch" else "solr-rerank"
            exported = ExportedSearch(cleaned, render(model, fmt)["search"]["linear"])
            alone = EngineBackend(config=cleaned)
            served = get_backend(ranker, version)
            k, window = collection.ndcg_k, model["window"]
            rankings: dict[str, list[list[str]]] = {"engine": [], "served": [], "export": []}
            for q in scorer.questions:
                vector = question_vectors([q.text])[0]
                rankings["engine"].append(alone.rank(RankQuery(q.external_id, q.text), k).ids)
                rankings["served"].append(served.rank(RankQuery(q.external_id, q.text), k).ids)
                rankings["export"].append(exported.ids(q.text, window, vector)[:k])
            exported.close()
            alone.close()
            if propagation:
                print(
                    f"{name:<11} {engine:<10} {propagation_experiment(collection, config, model, scorer)}",
                    flush=True,
                )
            complete = {
                key: float(
                    np.mean(score_rankings(run=scorer.definition, rankings=r, labels=scorer.labels).ndcg)
                )
                for key, r in rankings.items()
            }
            sign_check = rated_sign_check(
                scorer, rankings["served"], rankings["export"], complete["served"] - complete["export"]
            )
        finally:
            node.stop()
    weights = dict(zip([x["name"] for x in model["features"]], model["linear"]["weights"], strict=True))
    cost_complete = complete["served"] - complete["export"]
    shown = export_cost(f)
    agrees = np.sign(cost_complete) == np.sign(f["cost"])
    importances = sorted((version.feature_importances or {}).items(), key=lambda x: -x[1])[:5]
    print(
        f"{name:<11} {engine:<10} rated: engine {f['ndcg_engine']:.4f} export app {f['ndcg_export_app']:.4f} "
        f"engine-run {f['ndcg_export_engine']:.4f} served {f['ndcg_version']:.4f} parity {f['parity']:.4f} "
        f"({f['rankings_differing']} of {f['test_questions']} top 10s differ) cost {f['cost']:+.4f} | "
        f"complete ({len(scorer.questions)} q): engine {complete['engine']:.4f} served {complete['served']:.4f} "
        f"export {complete['export']:.4f} gap {complete['export'] - complete['served']:+.4f} "
        f"cost {cost_complete:+.4f} (sign {'agrees' if agrees else 'DIFFERS'}) | rated share version "
        f"{f.get('rated_share_version', 0):.3f} export {f.get('rated_share_export', 0):.3f}, cost 95% CI "
        f"{f.get('cost_ci_low')} to {f.get('cost_ci_high')}, unrated {f.get('cost_unrated')}: app shows "
        f"{shown.status!r} {shown.cost} (to rate {shown.to_rate}){'' if shown.cost is None or agrees else ' WRONG SIGN SHOWN'}"
        f" | importances {importances} | after rating: {sign_check}"
        f" | version {version.label} {version.method}; vectors {model['vectors']['answers']} "
        f"{model['vectors']['error']}; vector weight {weights.get('vector', 0):.3g}; "
        f"{time.perf_counter() - began:.0f} s",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--collections", default=",".join(COLLECTIONS))
    parser.add_argument("--engines", default="opensearch,solr")
    parser.add_argument("--propagation", action="store_true", help=propagation_experiment.__doc__)
    args = parser.parse_args()
    for name in args.collections.split(","):
        collection, truth = demo() if name == "cranfield-rr" else outside(name)
        for engine in args.engines.split(","):
            measure(name, engine, collection, truth, args.propagation)


if __name__ == "__main__":
    main()
