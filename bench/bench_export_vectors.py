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
  of ``cost`` there, against the sign of the export's own ``cost``.
"""

from __future__ import annotations

import argparse
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
from evaluation.services import score_rankings  # noqa: E402
from rankers.backends import RankQuery, get_backend  # noqa: E402
from rankers.engine import EngineBackend  # noqa: E402
from rankers.engine_config import validate_engine_config  # noqa: E402
from rankers.export.model import ExportedSearch  # noqa: E402
from rankers.export.render import render  # noqa: E402
from rankers.semantic import question_vectors  # noqa: E402
from rankers.services import ranker_create  # noqa: E402
from ratings.models import Label  # noqa: E402
from trainer.demo_vectors import demo_vectors_seed  # noqa: E402
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


def measure(name: str, engine: str, collection: Collection, truth: dict[str, dict[str, int]]) -> None:
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
            complete = {
                key: float(
                    np.mean(score_rankings(run=scorer.definition, rankings=r, labels=scorer.labels).ndcg)
                )
                for key, r in rankings.items()
            }
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
        f" | importances {importances}"
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
    args = parser.parse_args()
    for name in args.collections.split(","):
        collection, truth = demo() if name == "cranfield-rr" else outside(name)
        for engine in args.engines.split(","):
            measure(name, engine, collection, truth)


if __name__ == "__main__":
    main()
