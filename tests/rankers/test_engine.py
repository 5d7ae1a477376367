"""The engine backend against our stand-in Elasticsearch/OpenSearch/Solr server: what it sends (escaping
included), how it maps hits, and how it reports each kind of failure."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, parse_qsl

import pytest

from corpus.formats.records import AnswerRecord
from corpus.services import answers_upsert
from rankers.backends import get_backend
from rankers.base import RankQuery
from rankers.engine import EngineBackend, EngineError, EngineUnavailable
from rankers.engine_config import validate_engine_config
from rankers.services import ranker_create
from tests.rankers.engine_support import BOUNDARY_LAYER, NASTY, engine_fixture, es_config, solr_config  # noqa: F401

QUESTION = RankQuery(external_id="q1", text="boundary layer")


def backend(config: dict) -> EngineBackend:
    return EngineBackend(config=validate_engine_config(config))


def test_engine_elasticsearch_preset_ranks_and_sends_the_query_dsl(engine):
    ranking = backend(es_config(engine.url, auth_header="ApiKey c2VjcmV0")).rank(QUESTION, 10)

    assert ranking.answers == BOUNDARY_LAYER
    (sent,) = engine.requests
    assert (sent.method, sent.path, sent.query) == ("POST", "/answers/_search", "")
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["authorization"] == "ApiKey c2VjcmV0"
    assert json.loads(sent.body) == {
        "size": 10,
        "_source": False,
        "query": {"multi_match": {"query": "boundary layer", "fields": ["title^2", "text"]}},
    }


def test_engine_rows_limit_the_hits_asked_for_and_taken(engine):
    ranking = backend(es_config(engine.url)).rank(QUESTION, 1)

    assert ranking.answers == BOUNDARY_LAYER[:1]
    assert json.loads(engine.requests[0].body)["size"] == 1


def test_engine_json_body_carries_any_question_exactly(engine):
    backend(es_config(engine.url)).rank(RankQuery("q", NASTY), 5)

    body = engine.requests[0].body
    assert json.loads(body)["query"]["multi_match"]["query"] == NASTY
    # Escaped by the JSON encoder: the quote and the backslash escaped, the tab as \t, UTF-8 kept.
    assert b'boundary \\"layer\\" \\\\ {x}' in body
    assert b"\\t end" in body
    assert "naïve ☃ 😀".encode() in body


def test_engine_solr_preset_ranks_with_query_parameters(engine):
    ranking = backend(solr_config(engine.url)).rank(QUESTION, 10)

    assert ranking.answers == BOUNDARY_LAYER
    (sent,) = engine.requests
    assert (sent.method, sent.path, sent.body) == ("GET", "/solr/answers/select", b"")
    assert parse_qs(sent.query) == {
        "q": ["boundary layer"],
        "defType": ["simple"],
        "q.operators": ["WHITESPACE"],
        "qf": ["title^2 text"],
        "rows": ["10"],
        "fl": ["id,score"],
        "wt": ["json"],
    }


def test_engine_solr_question_text_stays_out_of_the_log(engine, caplog):
    # httpx logs each request's URL at INFO; a Solr URL carries the question's text.
    with caplog.at_level("DEBUG", logger="rankers"):
        backend(solr_config(engine.url)).rank(QUESTION, 10)

    assert engine.requests[0].query.startswith("q=boundary+layer")
    assert not [r for r in caplog.records if "boundary" in r.getMessage()]


def test_engine_query_string_carries_any_question_exactly(engine):
    backend(solr_config(engine.url)).rank(RankQuery("q", NASTY), 3)

    raw = engine.requests[0].query
    assert dict(parse_qsl(raw))["q"] == NASTY
    # "&", "#", "+", "%" and "?" in the question are encoded, so they can't end or add a parameter.
    assert "&#" not in raw and "#" not in raw
    assert "%26" in raw and "%23" in raw and "%2B" in raw and "%25" in raw
    assert [name for name, _ in parse_qsl(raw)] == ["q", "defType", "q.operators", "qf", "rows", "fl", "wt"]


def test_engine_opensearch_hybrid_preset_sends_the_pipeline_and_hybrid_query(engine):
    ranking = backend(
        {"preset": "opensearch-hybrid", "url": f"{engine.url}/answers/_search", "retries": 0}
    ).rank(QUESTION, 10)

    assert ranking.answers == BOUNDARY_LAYER
    (sent,) = engine.requests
    assert sent.query == "search_pipeline=nlp-search-pipeline"
    query = json.loads(sent.body)["query"]["hybrid"]["queries"]
    assert query[0] == {"match": {"text": {"query": "boundary layer"}}}
    assert query[1]["neural"]["passage_embedding"] == {
        "query_text": "boundary layer",
        "model_id": "your-model-id",
        "k": 10,
    }


def test_engine_elasticsearch_error_quotes_root_cause_reason_and_is_not_retried(engine):
    config = es_config(engine.url, retries=2, request={"body": {"query": {"fuzzyy": {"q": "{{question}}"}}}})

    with pytest.raises(EngineError) as info:
        backend(config).rank(QUESTION, 10)

    assert not isinstance(info.value, EngineUnavailable)
    assert info.value.status == 400
    assert info.value.engine_message == "unknown query [fuzzyy]"
    assert (
        str(info.value)
        == f"engine at {engine.url}/answers/_search answered 400 Bad Request: unknown query [fuzzyy]"
    )
    assert len(engine.requests) == 1


def test_engine_unknown_index_quotes_the_engine(engine):
    with pytest.raises(EngineError) as info:
        backend({"preset": "opensearch", "url": f"{engine.url}/nosuch/_search"}).rank(QUESTION, 10)

    assert (info.value.status, info.value.engine_message) == (404, "no such index [nosuch]")


def test_engine_unknown_search_pipeline_quotes_the_engine(engine):
    config = {
        "preset": "opensearch-hybrid",
        "url": f"{engine.url}/answers/_search",
        "request": {"params": {"search_pipeline": "nope"}},
    }

    with pytest.raises(EngineError) as info:
        backend(config).rank(QUESTION, 10)

    assert info.value.engine_message == "Pipeline nope is not defined"


def test_engine_solr_error_quotes_error_msg(engine):
    config = solr_config(
        engine.url, request={"params": {"q": "{{question}}", "qf": "title nosuch", "wt": "json"}}
    )

    with pytest.raises(EngineError) as info:
        backend(config).rank(QUESTION, 10)

    assert (info.value.status, info.value.engine_message) == (400, "undefined field nosuch")
    assert str(info.value).endswith("answered 400 Bad Request: undefined field nosuch")


def test_engine_html_error_page_is_not_quoted(engine):
    with pytest.raises(EngineError) as info:
        backend(solr_config(engine.url).copy() | {"url": f"{engine.url}/solr/nosuch/select"}).rank(
            QUESTION, 10
        )

    assert info.value.engine_message is None
    assert str(info.value) == f"engine at {engine.url}/solr/nosuch/select answered 404 Not Found"


def test_engine_auth_failure_quotes_the_reason_never_the_key(engine):
    engine.faults.error_status = 401

    with pytest.raises(EngineError) as info:
        backend(es_config(engine.url, auth_header="ApiKey wrong-key")).rank(QUESTION, 10)

    assert info.value.engine_message == "unable to authenticate user [trainer]"
    assert "wrong-key" not in str(info.value)


def test_engine_5xx_is_retried_then_succeeds(engine):
    engine.faults.fail_first = 2

    ranking = backend(es_config(engine.url, retries=2)).rank(QUESTION, 10)

    assert ranking.answers == BOUNDARY_LAYER
    assert len(engine.requests) == 3


def test_engine_5xx_after_the_retries_is_unavailable_with_the_engine_message(engine):
    engine.faults.fail_first = 5

    with pytest.raises(EngineUnavailable) as info:
        backend(es_config(engine.url, retries=1)).rank(QUESTION, 10)

    assert (info.value.status, info.value.engine_message) == (503, "all shards failed")
    assert len(engine.requests) == 2


def test_engine_slow_answer_is_a_timeout(engine):
    engine.faults.latency_ms = 600

    with pytest.raises(EngineUnavailable) as info:
        backend(es_config(engine.url, timeout=0.2)).rank(QUESTION, 10)

    # The one retry layer says how many attempts it made (es_config: no retries).
    assert (
        str(info.value) == f"engine at {engine.url}/answers/_search did not answer within 0.2 s (1 attempt)"
    )


def test_engine_body_that_is_not_json_is_an_error(engine):
    engine.faults.garbage = True

    with pytest.raises(EngineError) as info:
        backend(es_config(engine.url)).rank(QUESTION, 10)

    assert info.value.part == "response"
    assert str(info.value).endswith("answered 200 with a body that is not JSON")


@pytest.mark.parametrize(
    ("make_config", "drop", "at", "part"),
    [
        (es_config, "_id", 1, "response.hits.hits[1]._id missing"),
        (es_config, "_score", 0, "response.hits.hits[0]._score missing"),
        (solr_config, "id", 1, "response.response.docs[1].id missing"),
        (solr_config, "score", 0, "response.response.docs[0].score missing"),
    ],
)
def test_engine_missing_hit_field_names_the_mapping_path(engine, make_config, drop, at, part):
    engine.faults.drop, engine.faults.drop_at = drop, at

    with pytest.raises(EngineError) as info:
        backend(make_config(engine.url)).rank(QUESTION, 10)

    assert info.value.part == part.removesuffix(" missing")
    assert str(info.value) == f"engine at {make_config(engine.url)['url']}: {part}"


def test_engine_wrong_hits_path_names_the_first_missing_part(engine):
    with pytest.raises(EngineError) as info:
        backend(es_config(engine.url, response={"hits": "hits.items"})).rank(QUESTION, 10)

    assert str(info.value).endswith(": response.hits.items missing")


def test_engine_hits_path_to_an_object_is_not_a_list(engine):
    with pytest.raises(EngineError) as info:
        backend(es_config(engine.url, response={"hits": "hits"})).rank(QUESTION, 10)

    assert str(info.value).endswith(": response.hits is not a list")


def test_engine_score_that_is_text_is_named(engine):
    with pytest.raises(EngineError) as info:
        backend(es_config(engine.url, response={"score": "_index"})).rank(QUESTION, 10)

    assert str(info.value).endswith(": response.hits.hits[0]._index is not a number")


def test_engine_nested_id_path(engine):
    ranking = backend(es_config(engine.url, response={"id": "_source.title"})).rank(QUESTION, 10)

    assert ranking.ids == ["Boundary layer", "Heat transfer"]


def test_engine_refused_address_is_an_error_and_nothing_is_sent(engine, settings):
    ranker = backend(es_config(engine.url))
    settings.OUTBOUND_ALLOW_PRIVATE = False

    with pytest.raises(EngineError) as info:
        ranker.rank(QUESTION, 10)

    assert "refused by the outbound policy" in str(info.value)
    assert engine.requests == []


@pytest.mark.django_db
def test_engine_ranker_from_get_backend_reports_unknown_ids(engine, collection):
    answers_upsert(collection=collection, records=[AnswerRecord("a1", "Boundary layer", "")])
    ranker = ranker_create(collection=collection, name="ES", kind="engine", config=es_config(engine.url))

    ranking = get_backend(ranker).rank(QUESTION, 10)

    assert ranking.answers == BOUNDARY_LAYER
    assert ranking.unknown_ids == ["a3"]


def test_engine_form_body_carries_any_question_exactly(engine):
    config = solr_config(
        engine.url,
        request={
            "method": "POST",
            "params": {"wt": "json"},
            "form": {"q": "{{question}}", "rows": "{{rows}}", "fl": "id,score"},
        },
    )

    ranking = backend(config).rank(RankQuery("q", NASTY), 4)

    (sent,) = engine.requests
    assert (sent.method, sent.query) == ("POST", "wt=json")
    assert sent.headers["content-type"] == "application/x-www-form-urlencoded"
    assert parse_qsl(sent.body.decode()) == [("q", NASTY), ("rows", "4"), ("fl", "id,score")]
    assert b"%26" in sent.body and b"%23" in sent.body
    # a1 and a3 share "boundary" and "layer" with it, a4 "naïve", "☃" and "a" (from "a=b+c"): the
    # question reached the engine whole.
    assert ranking.ids == ["a1", "a4", "a3"]


def test_engine_form_solr_preset_over_post_ranks_like_get(engine):
    params = {
        "q": "{{question}}",
        "defType": "edismax",
        "qf": "title^2 text",
        "rows": "{{rows}}",
        "fl": "id,score",
    }
    config = solr_config(engine.url, request={"method": "POST", "params": {"wt": "json"}, "form": params})

    assert backend(config).rank(QUESTION, 10).answers == BOUNDARY_LAYER
