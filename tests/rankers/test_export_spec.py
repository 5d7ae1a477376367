"""The features an export uses, derived from an engine ranker's config, and the configs it refuses."""

from __future__ import annotations

import re

import pytest

from rankers.engine_config import preset_config, validate_engine_config
from rankers.export.spec import (
    ExportRefused,
    engine_family,
    export_features,
    opensearch_query,
    query_fields,
    question_param,
    solr_query,
)

OS_URL = "http://127.0.0.1:9200/answers/_search"
SOLR_URL = "http://127.0.0.1:8983/solr/answers/select"


def config(preset: str, url: str = OS_URL, **extra) -> dict:
    if preset == "custom":
        extra["response"] = {"hits": "hits.hits", "id": "_id", "score": "_score"}
    return validate_engine_config({"preset": preset, "url": url, **extra})


@pytest.mark.parametrize("preset", ["opensearch", "elasticsearch"])
def test_export_features_of_opensearch_presets_are_original_then_bm25_then_phrase_per_field(preset):
    assert [f["name"] for f in export_features(config(preset))] == [
        "original",
        "bm25_title",
        "bm25_text",
        "phrase_title",
        "phrase_text",
    ]
    assert engine_family(config(preset)) == "opensearch"


def test_export_features_of_solr_preset_come_from_qf():
    solr = config("solr", SOLR_URL)

    assert export_features(solr)[1:3] == [
        {"name": "bm25_title", "kind": "bm25", "field": "title"},
        {"name": "bm25_text", "kind": "bm25", "field": "text"},
    ]
    assert (engine_family(solr), question_param(solr)) == ("solr", ("params", "q"))


def test_query_fields_drop_boosts_and_repeats():
    body = preset_config("opensearch")["request"]["body"]
    body["query"]["multi_match"]["fields"] = ["title^3", "text", "title", "summary.en^0.5"]

    assert query_fields(config("opensearch", request={"body": body})) == ["title", "text", "summary.en"]


def test_solr_feature_names_replace_dots_in_field_names():
    solr = config(
        "solr", SOLR_URL, request={"params": {**preset_config("solr")["request"]["params"], "qf": "a.b"}}
    )

    assert [f["name"] for f in export_features(solr)] == ["original", "bm25_a_b", "phrase_a_b"]


@pytest.mark.parametrize(
    ("preset", "url", "request_part", "message"),
    [
        ("custom", OS_URL, {"body": {"query": {"match": {"text": "{{question}}"}}}}, "the 'custom' preset"),
        ("opensearch-hybrid", OS_URL, {}, "the 'opensearch-hybrid' preset"),
        (
            "opensearch",
            OS_URL,
            {"body": {"query": {"match": {"text": "{{question}}"}}}},
            "no query.multi_match",
        ),
        ("solr", SOLR_URL, {"params": {"q": "{{question}}", "defType": "simple"}}, "no qf"),
        ("solr", SOLR_URL, {"params": {"q": "title:{{question}}", "qf": "title"}}, "exactly {{question}}"),
    ],
)
def test_export_features_refuse_configs_without_known_fields(preset, url, request_part, message):
    with pytest.raises(ExportRefused, match=re.escape(message)):
        export_features(config(preset, url, request=request_part))


def test_export_features_refuse_answer_ids_from_a_source_field():
    with pytest.raises(ExportRefused, match="the ranker's answer ids are not the documents' _id"):
        export_features(config("opensearch", response={"id": "_source.doc_id"}))


def test_opensearch_queries_take_the_question_as_text():
    original = {"multi_match": {"query": "flat plate", "fields": ["title^2", "text"]}}

    assert opensearch_query({"name": "original", "kind": "original"}, original, "flat plate") == original
    assert opensearch_query({"name": "b", "kind": "bm25", "field": "title"}, original, "flat plate") == {
        "match": {"title": {"query": "flat plate"}}
    }
    assert opensearch_query({"name": "p", "kind": "phrase", "field": "text"}, original, "flat plate") == {
        "match_phrase": {"text": {"query": "flat plate"}}
    }


def test_solr_queries_read_the_question_inside_or_after_the_local_parameters():
    bm25 = {"name": "bm25_title", "kind": "bm25", "field": "title"}
    phrase = {"name": "phrase_text", "kind": "phrase", "field": "text"}

    assert solr_query(bm25, "v=$q") == "{!simple qf=title q.operators=WHITESPACE v=$q}"
    assert solr_query(phrase, "v=$q") == "{!lucene}{!field f=text v=$q}"  # never a null query
    assert solr_query(bm25, "${user_query}") == "{!simple qf=title q.operators=WHITESPACE}${user_query}"
    assert solr_query(phrase, "${user_query}") == "{!field f=text}${user_query}"
