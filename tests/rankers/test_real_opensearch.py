"""The Elasticsearch/OpenSearch presets against a real OpenSearch 2.19 node (tests/rankers/real_engines.py)
holding the Cranfield demo answers: ranking, an evaluation, questions full of query syntax, the node's own
error messages, the Authorization header as the node received it, and the hybrid preset."""

from __future__ import annotations

import re

import numpy as np
import pytest
import yaml

from corpus.models import Question, Split
from evaluation.models import QuestionResult, RunStatus
from evaluation.services import score_rankings
from rankers.base import RankQuery
from rankers.engine import EngineBackend, EngineError
from rankers.engine_config import preset_config, validate_engine_config
from rankers.services import ranker_create
from tests.evaluation.helpers import evaluate_inline
from tests.http_client import HTTP
from tests.rankers.real_engines import ROOT

QUESTION = "what is the boundary layer of a flat plate in supersonic flow"
# Quotes, backslashes, unicode (accents, a snowman, an emoji outside the BMP, a tab), every character of
# the Lucene query syntax, a field query, a placeholder and JSON that would close the string if pasted.
SYNTAX = '+ - && || ! ( ) { } [ ] ^ " ~ * ? : \\ /'
NASTY = f'boundary "layer" \\ {SYNTAX} naïve ☃ 😀\tflat id:184 {{{{rows}}}} "}}}}, "size": 1000, "x": "'


def words(text: str) -> str:
    """The question as plain words: what an engine should search when it takes the text as text."""
    return " ".join(re.findall(r"\w+", text))


def multi_match(question: str, size: int = 10) -> dict:
    """The opensearch preset's body, written out by hand (the expected values come from it)."""
    return {
        "size": size,
        "_source": False,
        "query": {"multi_match": {"query": question, "fields": ["title^2", "text"]}},
    }


def backend(config: dict) -> EngineBackend:
    return EngineBackend(config=validate_engine_config(config))


def os_config(opensearch, preset: str = "opensearch", **extra) -> dict:
    return {"preset": preset, "url": opensearch.search_url, "retries": 0, **extra}


@pytest.mark.parametrize("preset", ["opensearch", "elasticsearch"])
def test_preset_ranks_as_the_node_itself_scores(opensearch, preset):
    ranking = backend(os_config(opensearch, preset)).rank(RankQuery("q", QUESTION), 10)

    assert ranking.answers == opensearch.search(multi_match(QUESTION))
    assert ranking.ids[:3] == ["3", "180", "1370"]
    assert ranking.answers[0][1] == pytest.approx(23.039906, abs=1e-5)


def test_preset_rows_limit_the_hits(opensearch):
    ranking = backend(os_config(opensearch)).rank(RankQuery("q", QUESTION), 3)

    assert ranking.answers == opensearch.search(multi_match(QUESTION))[:3]


def test_question_with_query_syntax_ranks_as_its_plain_words(opensearch):
    ranking = backend(os_config(opensearch)).rank(RankQuery("q", NASTY), 10)

    assert len(ranking.answers) == 10  # not the "size": 1000 in the question
    assert ranking.answers == opensearch.search(multi_match(words(NASTY)))
    assert ranking.ids[0] == "1370"


def test_question_of_only_syntax_characters_ranks_nothing(opensearch):
    assert backend(os_config(opensearch)).rank(RankQuery("q", SYNTAX), 10).answers == []


def test_unknown_index_quotes_the_node(opensearch):
    url = f"{opensearch.url}/no-such-index/_search"

    with pytest.raises(EngineError) as caught:
        backend({"preset": "opensearch", "url": url, "retries": 0}).rank(RankQuery("q", QUESTION), 10)

    assert str(caught.value) == f"engine at {url} answered 404 Not Found: no such index [no-such-index]"
    assert (caught.value.status, caught.value.engine_message) == (404, "no such index [no-such-index]")


def test_malformed_template_quotes_the_node(opensearch):
    body = preset_config("opensearch")["request"]["body"]
    body["query"]["multi_match"]["feilds"] = body["query"]["multi_match"].pop("fields")

    with pytest.raises(EngineError) as caught:
        backend(os_config(opensearch, request={"body": body})).rank(RankQuery("q", QUESTION), 10)

    assert str(caught.value) == (
        f"engine at {opensearch.search_url} answered 400 Bad Request: "
        "[multi_match] unknown token [START_ARRAY] after [feilds]"
    )


def test_bad_field_boost_quotes_the_node(opensearch):
    body = preset_config("opensearch")["request"]["body"]
    body["query"]["multi_match"]["fields"] = ["title^two", "text"]

    with pytest.raises(EngineError) as caught:
        backend(os_config(opensearch, request={"body": body})).rank(RankQuery("q", QUESTION), 10)

    assert caught.value.engine_message == 'For input string: "two"'


def test_auth_header_reaches_the_node(opensearch):
    before = len(opensearch.requests_seen())
    config = os_config(opensearch, auth_header="ApiKey c2VjcmV0OmtleQ==")

    backend(config).rank(RankQuery("q", QUESTION), 5)
    backend(os_config(opensearch)).rank(RankQuery("q", QUESTION), 5)

    assert opensearch.requests_seen()[before:] == [
        "POST /cranfield/_search authorization=ApiKey c2VjcmV0OmtleQ==",
        "POST /cranfield/_search authorization=-",
    ]


def test_hybrid_preset_needs_the_neural_search_plugin(opensearch):
    """The hybrid query and the normalization processor come from the neural-search plugin, which is not
    published as a Maven artifact (so this node has none): the node's own messages say what is missing,
    the query first, then (with the preset's lexical part alone) the preset's search pipeline."""
    config = os_config(opensearch, "opensearch-hybrid")

    with pytest.raises(EngineError) as caught:
        backend(config).rank(RankQuery("q", QUESTION), 10)
    assert str(caught.value) == (
        f"engine at {opensearch.search_url} answered 400 Bad Request: unknown query [hybrid]"
    )

    body = preset_config("opensearch-hybrid")["request"]["body"]
    body["query"] = body["query"]["hybrid"]["queries"][0]
    with pytest.raises(EngineError) as caught:
        backend({**config, "request": {"body": body}}).rank(RankQuery("q", QUESTION), 10)
    assert caught.value.engine_message == "Pipeline nlp-search-pipeline is not defined"


@pytest.mark.django_db
def test_evaluation_of_the_demo_collection_scores_the_node_rankings(opensearch, demo_load):
    collection = demo_load()
    ranker = ranker_create(
        collection=collection, name="OpenSearch", kind="engine", config=os_config(opensearch)
    )

    run = evaluate_inline(ranker)

    assert run.status == RunStatus.SUCCEEDED, run.error
    results = list(
        QuestionResult.objects.filter(run=run).select_related("question").order_by("question__external_id")
    )
    test_questions = Question.objects.filter(collection=collection, split=Split.TEST).order_by("external_id")
    expected = [[a for a, _ in opensearch.search(multi_match(q.text))] for q in test_questions]
    assert [r.ranked_answer_ids for r in results] == expected
    labels = [
        {a: g for a, g in zip(r.ranked_answer_ids, r.labels, strict=True) if g is not None} for r in results
    ]
    scored = score_rankings(run=run, rankings=expected, labels=labels)
    assert [r.dcg for r in results] == pytest.approx(list(scored.dcg))
    assert run.ndcg_mean == pytest.approx(float(np.mean([r.ndcg for r in results if r.ndcg is not None])))
    assert (len(results), round(run.ndcg_mean, 4)) == (57, 0.3281)


def test_compose_engine_profile_runs_the_version_tested_here(opensearch):
    """docker-compose.yml's optional OpenSearch (`docker compose --profile engine up`) is this version."""
    service = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["opensearch"]
    version = HTTP.get(opensearch.url, timeout=30).json()["version"]["number"]

    assert service["image"] == f"opensearchproject/opensearch:{version}"
    assert service["profiles"] == ["engine"]
    assert service["environment"]["DISABLE_SECURITY_PLUGIN"] == "true"
    assert service["environment"]["discovery.type"] == "single-node"
