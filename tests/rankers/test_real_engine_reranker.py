"""An engine ranker trains a reranker of its engine's top 50 answers: against the real OpenSearch and Solr
nodes (tests/rankers/real_engines.py) holding the Cranfield demo, whose complete judgments are the labels."""

from __future__ import annotations

import math

import pytest

from corpus.models import Question, Split
from rankers.backends import get_backend
from rankers.base import Ranking, RankQuery
from rankers.engine import EngineUnavailable
from rankers.reranking import RerankingBackend
from rankers.services import ranker_create
from ratings.selectors import labels_for_collection
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures (model_dir)
from trainer.services import demo_collection_load, ranker_train, version_decide

pytestmark = pytest.mark.django_db


def _config(engine: str, node) -> dict:
    if engine == "opensearch":
        return {"preset": "opensearch", "url": node.search_url, "retries": 0}
    return {"preset": "solr", "url": node.select_url, "retries": 0}


@pytest.fixture
def demo(model_dir, demo_vectors):
    return demo_collection_load()


def _labels(collection, split: str) -> dict[int, dict[str, int]]:
    labels: dict[int, dict[str, int]] = {}
    rows = labels_for_collection(collection=collection, split=split).values_list(
        "question_id", "answer__external_id", "gain"
    )
    for question_id, answer_id, gain in rows:
        labels.setdefault(question_id, {})[answer_id] = gain
    return labels


def _judged_ndcg(ranking: list[str], labels: dict[str, int], k: int) -> float:
    """Judged-only NDCG@k of the top 2k written out (the learner's CV depth, two pages): its unrated
    answers removed, the first k left scored, gain g (linear), discount 1/log2(rank + 1)."""
    condensed = [a for a in ranking[: 2 * k] if a in labels][:k]
    dcg = sum(labels[a] / math.log2(i + 2) for i, a in enumerate(condensed))
    ideal = sum(g / math.log2(i + 2) for i, g in enumerate(sorted(labels.values(), reverse=True)[:k]))
    return dcg / ideal if ideal > 0 else math.nan


@pytest.mark.parametrize("engine", ["opensearch", "solr"])
def test_engine_ranker_trains_a_reranker_of_the_engine_top_50(request, engine, demo):
    node = request.getfixturevalue(engine)
    ranker = ranker_create(collection=demo, name=engine, kind="engine", config=_config(engine, node))
    assert (demo.gain_scheme, demo.discount, demo.ndcg_k) == ("linear", "log2", 10)

    version = ranker_train(ranker=ranker)

    ranker.refresh_from_db()
    # v1 is the engine as it is, made champion before training: what the reranker has to beat.
    assert (ranker.champion.label, ranker.champion.method) == ("v1", "")
    assert version.label == "v2"
    details = version.details
    assert (details["first_stage"], details["candidates_depth"], details["semantic"]) == ("engine", 50, True)
    assert [c["name"] for c in details["candidates"]] == ["engine", "fusion", "learned-fusion", "lambdamart"]
    # The engine's own order needs no fitting: its CV figure is the mean judged-only NDCG@10 of the
    # node's top 20 over the training questions, computed here from the node's own answers.
    engine_first = get_backend(ranker, ranker.champion)
    labels = _labels(demo, Split.TRAIN)
    per_question = [
        _judged_ndcg(engine_first.rank(RankQuery(q.external_id, q.text), 50).ids, labels[q.pk], 10)
        for q in Question.objects.filter(pk__in=labels).order_by("pk")
    ]
    defined = [v for v in per_question if not math.isnan(v)]
    assert details["candidates"][0]["cv_ndcg"] == pytest.approx(sum(defined) / len(defined), abs=1e-6)
    assert version.cv_ndcg_bm25 == details["candidates"][0]["cv_ndcg"]  # the first stage's figure
    assert details["cv_vs_first_stage"]["questions"] == len(defined)
    # The demo's labels list little more than the relevant answers, so what learns from rated answers
    # only has few 0-star examples: the guard keeps the untrained z(engine) + z(cosine).
    assert (version.method, details["params"]["signals"]) == ("fusion", ["engine", "cosine"])

    # Trained with its export into the engine (trainer.engine_export): the rescore/rerank query the
    # engine runs ranks the test questions as the app ranks the same linear model.
    export = version.details["export"]["figures"]
    assert (export["version"], export["window"], export["parity_ok"]) == ("v2", 50, True)
    assert export["cost"] == pytest.approx(export["ndcg_version"] - export["ndcg_export_app"], abs=1e-6)

    decision, reason = version_decide(version=version)
    version.refresh_from_db()
    assert decision == "promoted", reason
    assert version.comparison["champion"] == "v1"
    # Judged-only NDCG@10 on the 57 test questions: OpenSearch 0.404 → 0.451, Solr 0.424 → 0.469.
    expected = {"opensearch": (0.451, 0.404), "solr": (0.469, 0.424)}[engine]
    figures = (version.comparison["challenger_ndcg"], version.comparison["champion_ndcg"])
    assert figures == pytest.approx(expected, abs=5e-4)
    assert version.comparison["p_value"] < 0.05

    # It reranks the engine's top 50 only, and candidates handed in (the rank call) rank as its own.
    backend = get_backend(ranker, version)
    assert isinstance(backend, RerankingBackend)
    moved = 0
    for question in Question.objects.filter(collection=demo, split=Split.TEST).order_by("pk")[:20]:
        query = RankQuery(question.external_id, question.text)
        top50 = engine_first.rank(query, 50)
        reranked = backend.rank(query, 10)
        assert len(reranked.ids) == 10
        assert set(reranked.ids) <= set(top50.ids)
        assert backend.rerank(query, Ranking(answers=top50.answers), 10).answers == reranked.answers
        moved += reranked.ids != top50.ids[:10]
    assert moved >= 10  # the reranker changes most top 10s


def test_engine_ranker_engine_down_fails_the_training_with_the_engine_reason(demo):
    ranker = ranker_create(
        collection=demo,
        name="gone",
        kind="engine",
        config={"preset": "opensearch", "url": "http://127.0.0.1:1/answers/_search", "retries": 0},
    )

    with pytest.raises(EngineUnavailable) as info:
        ranker_train(ranker=ranker)

    assert str(info.value).startswith("engine at http://127.0.0.1:1/answers/_search cannot be reached")
