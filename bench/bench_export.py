"""Shipping a model into the engine (issue 25 §3; not a test; see bench/README.md, "Exports into the engine").

    make engines && .venv/bin/python bench/bench_export.py [--variants] [--train]

Starts a real OpenSearch and a real Solr as the tests do (tests/rankers/real_engines.py), one at a time,
indexes the Cranfield demo answers, loads the demo collection into a throwaway SQLite database, makes an
engine ranker of the preset and fits its export model (``trainer.engine_export.engine_export_fit``: the
linear and tree models on the 93 training questions' labels over the engine's top 50). Prints, on the 57
test questions, NDCG@10 of the engine alone, of the exported linear model as the app ranks it (with the
engine's feature values), of the exported rescore (OpenSearch) / rerank (Solr) request run by the engine,
their difference (parity), the tree model as the app ranks it, the fit's seconds, and the median
latency of a question through the engine's own request and through the exported one (10 answers).

``--variants`` also refits on the same engine features what the export chose against: the linear and
tree models with an unrated candidate read as 0 stars (the export leaves it out: unknown, not bad), and
the tree model without its monotone constraints; each scored on the test questions as the app ranks.

``--train`` first trains the ranker here (``trainer.services.ranker_train``: the engine's top 50 reranked
by the app's model, with embeddings) and exports that version: then ``left_out`` names the reranker's
features the engine cannot compute, ``cost`` is what leaving them out costs in NDCG@10, and the last
figure is the export run by the engine minus the served reranker (the version's own ranking, as
``ranker_server`` serves it), the gap issue 35 §1 wants within 0.01. Since issue 35 the export writes
the answers' vectors into the engine (``rankers.export.vectors``) and has a ``vector`` feature.

``--ltr`` runs the tree model in the engine instead (issue 35, ties): a Solr 8.11.4 node with Solr's LTR
module (``engines/solr-ltr``, as tests/rankers/test_export_solr_ltr.py starts it) takes the rendered
``solr-ltr`` feature store and models, and its ``{!ltr}`` rerank of the tree model ranks each test
question. Printed: NDCG@10 on rated answers of the tree model as Solr runs it, as the app ranks it (equal
scores by document number, as Solr orders them: ``Candidates.ranked``) and as the app ranked it before
(equal scores in the engine's first-stage order), how many top 10s differ from Solr's either way, and
whether the tree model is offered (``export_offers``: not below the engine alone).
"""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
TMP = tempfile.mkdtemp(prefix="bench-export-")
atexit.register(shutil.rmtree, TMP, ignore_errors=True)
os.environ["DATABASE_URL"] = f"sqlite:///{TMP}/bench.sqlite3"
os.environ["MODEL_DIR"] = f"{TMP}/models"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("DEBUG", "1")
os.environ.setdefault("OUTBOUND_ALLOW_PRIVATE", "1")

import django  # noqa: E402

django.setup()

import numpy as np  # noqa: E402
from django.core.management import call_command  # noqa: E402

from corpus.models import Collection, Question, Split  # noqa: E402
from evaluation.metrics.ranking import label_arrays, mean_ignoring_undefined, ndcg_at_k  # noqa: E402
from evaluation.services import rated_top  # noqa: E402
from rankers.base import RankQuery  # noqa: E402
from rankers.engine import (  # noqa: E402
    EngineBackend,  # noqa: E402
    map_hits,
    prepare,
)
from rankers.engine_config import validate_engine_config  # noqa: E402
from rankers.export.fetch import EngineFeatures  # noqa: E402
from rankers.export.linear import fit_export_linear  # noqa: E402
from rankers.export.model import ExportedSearch, search_config  # noqa: E402
from rankers.export.render import render  # noqa: E402
from rankers.export.spec import export_features  # noqa: E402
from rankers.export.trees import LAMBDAMART_PARAMS, lambdamart_params, predict_trees  # noqa: E402
from rankers.fitting import lambdamart_fit  # noqa: E402
from rankers.fusion import ideal_dcg_from_labels  # noqa: E402
from rankers.models import RankerVersion  # noqa: E402
from rankers.semantic import question_vectors  # noqa: E402
from rankers.services import ranker_create  # noqa: E402
from ratings.selectors import labels_for_collection  # noqa: E402
from tests.rankers import real_engines as real  # noqa: E402
from trainer.demo_vectors import demo_vectors_seed  # noqa: E402
from trainer.engine_export import engine_export_fit, export_offers  # noqa: E402
from trainer.services import demo_collection_load, ranker_train  # noqa: E402


def start_opensearch(home: Path) -> real.EngineNode:
    command = real.java_command("opensearch", "OpenSearchNode", str(real.free_port()), str(home))
    return real.start_node("OpenSearch", home, command)


def start_solr(home: Path) -> real.EngineNode:
    home.mkdir(parents=True, exist_ok=True)
    configsets = home.parent / "configsets"  # a copy: the export adds its vector field to the schema
    shutil.copytree(real.ENGINES / "solr" / "configsets", configsets)
    command = real.java_command("solr", "SolrNode", str(real.free_port()), str(home), str(configsets))
    return real.start_node("Solr", home, command)


def median_ms(backend: EngineBackend | ExportedSearch, texts: list[str]) -> float:
    """Median ms of a question through the engine (the question's vector computed beforehand)."""
    vectors = question_vectors(texts)
    times = []
    for text, vector in zip(texts, vectors, strict=True):
        began = time.perf_counter()
        if isinstance(backend, ExportedSearch):
            backend.ids(text, 10, vector)
        else:
            backend.rank(RankQuery("q", text), 10)
        times.append(time.perf_counter() - began)
    return statistics.median(times) * 1000


def labelled(collection: Collection, split: str) -> list[tuple[str, dict[str, int]]]:
    labels: dict[int, dict[str, int]] = {}
    rows = labels_for_collection(collection=collection, split=split).values_list(
        "question_id", "answer__external_id", "gain"
    )
    for question_id, answer_id, gain in rows:
        labels.setdefault(question_id, {})[answer_id] = gain
    questions = Question.objects.filter(id__in=list(labels)).order_by("id")
    return [(q.text, labels[q.pk]) for q in questions]


def variants(collection: Collection, config: dict) -> str:
    """Test NDCG@10 (as the app ranks) of the models the export did not choose (module docstring)."""
    fetcher = EngineFeatures(config=config, features=export_features(config))
    train = [(fetcher.candidates(text, 50), labels) for text, labels in labelled(collection, Split.TRAIN)]
    test = [(fetcher.candidates(text, 50), labels) for text, labels in labelled(collection, Split.TEST)]
    train = [(c, labels) for c, labels in train if any(labels.get(a, 0) > 0 for a in c.ids)]
    ideal = ideal_dcg_from_labels([list(labels.values()) for _, labels in train], 10)

    def ndcg(score) -> float:
        rankings = [c.ranked(score(c.values)) for c, _ in test]
        arrays = label_arrays(rankings, [labels for _, labels in test])
        return mean_ignoring_undefined(ndcg_at_k(arrays.retrieved, arrays.ideal, 10)).mean

    out = []
    for unrated, name in ((np.nan, "rated only"), (0.0, "unrated as 0")):
        stars = [np.array([labels.get(a, unrated) for a in c.ids], dtype=np.float64) for c, labels in train]
        weights, _ = fit_export_linear(
            np.vstack([c.values for c, _ in train]),
            np.concatenate(stars),
            [len(s) for s in stars],
            ideal_dcg=ideal,
            k=10,
        )
        known = [~np.isnan(s) for s in stars]
        trees = {}
        for params, kind in ((lambdamart_params(5), "monotone"), (LAMBDAMART_PARAMS, "free")):
            booster = lambdamart_fit(
                features=np.vstack([c.values[m] for (c, _), m in zip(train, known, strict=True)]),
                targets=np.concatenate([s[m] for s, m in zip(stars, known, strict=True)]),
                groups=[int(m.sum()) for m in known],
                params=params,
                exponential_gain=False,
                truncation=10,
                seed=20240601,
                feature_names=[f["name"] for f in export_features(config)],
            )
            trees[kind] = ndcg(lambda x, b=booster: np.asarray(b.predict(x, num_threads=1)))
        out.append(
            f"{name}: linear {ndcg(lambda x, w=weights: x @ np.array(w)):.4f}, trees monotone "
            f"{trees['monotone']:.4f}, trees free {trees['free']:.4f}"
        )
    fetcher.close()
    return "; ".join(out)


def measure(
    name: str, engine: str, start, index, config, collection: Collection, train: bool, compare: bool
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        node = start(Path(tmp) / engine)
        try:
            index(node)
            ranker = ranker_create(collection=collection, name=name, kind="engine", config=config(node))
            version = ranker_train(ranker=ranker) if train else None
            began = time.perf_counter()
            model = engine_export_fit(ranker=ranker, version=version)
            seconds = time.perf_counter() - began
            cleaned = validate_engine_config(config(node))
            fmt = "opensearch-rescore" if engine == "opensearch" else "solr-rerank"
            exported = ExportedSearch(cleaned, render(model, fmt)["search"]["linear"])
            texts = [q.text for q in Question.objects.filter(collection=collection, split=Split.TEST)]
            own_ms, exported_ms = median_ms(EngineBackend(config=cleaned), texts), median_ms(exported, texts)
            others = variants(collection, cleaned) if compare else ""
        finally:
            node.stop()
    f = model["figures"]
    weights = ", ".join(
        f"{feature['name']} {w:.3g}"
        for feature, w in zip(model["features"], model["linear"]["weights"], strict=True)
    )
    print(
        f"{name:<11} engine {f['ndcg_engine']:.4f}  export app {f['ndcg_export_app']:.4f}  "
        f"export engine {f['ndcg_export_engine']:.4f}  parity {f['parity']:.4f} "
        f"({f['rankings_differing']} of {f['test_questions']} top 10s differ)  trees app {f['ndcg_trees_app']:.4f}  "
        f"fit {seconds:.1f} s  latency own {own_ms:.1f} ms, exported {exported_ms:.1f} ms"
    )
    print(f"{'':<11} weights: {weights}")
    if others:
        print(f"{'':<11} variants (test NDCG@10 as the app ranks): {others}")
    vectors = model.get("vectors") or {}
    print(
        f"{'':<11} vectors: {vectors.get('answers', 0)} answers in {vectors.get('field')} {vectors.get('error', '')}"
    )
    if version is not None:
        left = ", ".join(item["feature"] for item in model["left_out"]) or "nothing"
        print(
            f"{'':<11} version {version.label} ({version.method}), the served reranker, {f['ndcg_version']:.4f}; "
            f"left out: {left}; cost {f['cost']:+.4f}; export run by the engine - served "
            f"{f['ndcg_export_engine'] - f['ndcg_version']:+.4f}"
        )


def rated_ndcg(rankings: list[list[str]], labels: list[dict[str, int]]) -> float:
    """Mean NDCG@10 on rated answers (each top 10 condensed to its rated answers), the export's measure."""
    rated = [rated_top(r, known, 10) for r, known in zip(rankings, labels, strict=True)]
    arrays = label_arrays(rated, labels)
    return float(mean_ignoring_undefined(ndcg_at_k(arrays.retrieved, arrays.ideal, 10)).mean)


def ltr(collection: Collection) -> None:
    """The tree model run by Solr's LTR module against the app's ranking of it (module docstring)."""
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "solr-ltr"
        configsets = real.ENGINES / "solr-ltr" / "configsets"
        command = real.java_command(
            "solr-ltr", "SolrLtrNode", str(real.free_port()), str(home), str(configsets)
        )
        node = real.start_node("Solr LTR", home, command)
        try:
            real.solr_index_cranfield(node.url, "cranfield")
            config = {"preset": "solr", "url": f"{node.url}/cranfield/select", "retries": 0}
            ranker = ranker_create(collection=collection, name="solr ltr", kind="engine", config=config)
            version = RankerVersion.objects.create(ranker=ranker, label="v1")
            model = engine_export_fit(ranker=ranker, version=version)
            rendered = render(model, "solr-ltr")
            for step in rendered["requests"]:
                real.HTTP.request(
                    step["method"], step["url"], json=step["body"], timeout=60
                ).raise_for_status()
            cleaned = validate_engine_config(config)
            fetcher = EngineFeatures(config=cleaned, features=model["features"])
            solr = EngineBackend(config=search_config(cleaned, rendered["search"]["trees"]))
            labels, ranked, first_stage, engine = [], [], [], []
            for text, known in labelled(collection, Split.TEST):
                found = fetcher.candidates(text, model["window"])
                scores = predict_trees(model["trees"]["trees"], found.values)
                labels.append(known)
                ranked.append(found.ranked(scores))
                first_stage.append([found.ids[i] for i in np.argsort(-scores, kind="stable")])
                payload = solr.fetch(prepare(solr.config, question=text, rows=10))
                engine.append(map_hits(payload, solr.mapping, k=10, known_ids=None).ids)
            fetcher.close()
            solr.close()
        finally:
            node.stop()
    f = model["figures"]
    offered = export_offers(model=model, version=version)["trees"]
    differ = sum(a[:10] != b for a, b in zip(ranked, engine, strict=True))
    differ_before = sum(a[:10] != b for a, b in zip(first_stage, engine, strict=True))
    print(
        f"Solr LTR    {len(labels)} questions: engine alone {f['ndcg_engine']:.4f}; tree model as Solr runs it "
        f"{rated_ndcg(engine, labels):.4f}, as the app ranks it {rated_ndcg(ranked, labels):.4f} (export "
        f"figure {f['ndcg_trees_app']:.4f}; {differ} top 10s differ from Solr's), ties in first-stage order "
        f"{rated_ndcg(first_stage, labels):.4f} ({differ_before} differ); offered: {offered.offered} {offered.why}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--train", action="store_true", help="train the ranker first and export that version")
    parser.add_argument("--variants", action="store_true", help="also the models the export did not choose")
    parser.add_argument("--ltr", action="store_true", help="only the tree model run by Solr's LTR module")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    demo_collection_load()
    demo_vectors_seed()  # the demo's shipped answer vectors: none encoded here
    collection = Collection.objects.get(slug="cranfield")
    if args.ltr:
        ltr(collection)
        return
    measure(
        "OpenSearch",
        "opensearch",
        start_opensearch,
        lambda node: real.opensearch_index_cranfield(node.url, "cranfield"),
        lambda node: {"preset": "opensearch", "url": f"{node.url}/cranfield/_search", "retries": 0},
        collection,
        args.train,
        args.variants,
    )
    measure(
        "Solr",
        "solr",
        start_solr,
        lambda node: real.solr_index_cranfield(node.url, "cranfield"),
        lambda node: {"preset": "solr", "url": f"{node.url}/cranfield/select", "retries": 0},
        collection,
        args.train,
        args.variants,
    )


if __name__ == "__main__":
    main()
