"""Checking an engine ranker's config: presets, placeholders, mapping paths, secrets."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError

from rankers.config import redacted_config, validate_ranker_config
from rankers.engine_config import (
    ERROR_PATHS,
    MASK,
    fill_params,
    fill_template,
    keep_engine_secrets,
    validate_engine_config,
)
from tests.rankers.engine_support import NASTY


def errors(config):
    with pytest.raises(ValidationError) as info:
        validate_ranker_config(kind="engine", config=config)
    return info.value.message_dict


def test_engine_config_elasticsearch_preset_fills_request_and_response():
    cleaned = validate_ranker_config(
        kind="engine", config={"preset": "elasticsearch", "url": " http://127.0.0.1:9200/answers/_search "}
    )

    assert cleaned == {
        "preset": "elasticsearch",
        "url": "http://127.0.0.1:9200/answers/_search",
        "request": {
            "method": "POST",
            "body": {
                "size": "{{rows}}",
                "_source": False,
                "query": {"multi_match": {"query": "{{question}}", "fields": ["title^2", "text"]}},
            },
        },
        "response": {"hits": "hits.hits", "id": "_id", "score": "_score", "errors": ERROR_PATHS},
        "timeout": 10.0,
        "retries": 2,
    }


def test_engine_config_solr_preset_fills_query_parameters():
    cleaned = validate_engine_config({"preset": "solr", "url": "http://127.0.0.1:8983/solr/answers/select"})

    assert cleaned["request"] == {
        "method": "GET",
        "params": {
            "q": "{{question}}",
            "defType": "simple",
            "q.operators": "WHITESPACE",
            "qf": "title^2 text",
            "rows": "{{rows}}",
            "fl": "id,score",
            "wt": "json",
        },
    }
    assert cleaned["response"] == {
        "hits": "response.docs",
        "id": "id",
        "score": "score",
        "errors": ERROR_PATHS,
    }


def test_engine_config_opensearch_hybrid_preset_names_a_search_pipeline():
    cleaned = validate_engine_config(
        {"preset": "opensearch-hybrid", "url": "http://127.0.0.1:9200/a/_search"}
    )

    assert cleaned["request"]["params"] == {"search_pipeline": "nlp-search-pipeline"}
    queries = cleaned["request"]["body"]["query"]["hybrid"]["queries"]
    assert queries[0] == {"match": {"text": {"query": "{{question}}"}}}
    assert queries[1]["neural"]["passage_embedding"]["query_text"] == "{{question}}"


def test_engine_config_preset_parts_stay_editable():
    cleaned = validate_engine_config(
        {
            "preset": "elasticsearch",
            "url": "http://127.0.0.1:9200/answers/_search",
            "request": {"body": {"size": "{{rows}}", "query": {"match": {"body": "{{question}}"}}}},
            "response": {"id": "_source.doc_id"},
        }
    )

    assert cleaned["request"] == {
        "method": "POST",
        "body": {"size": "{{rows}}", "query": {"match": {"body": "{{question}}"}}},
    }
    assert cleaned["response"] == {
        "hits": "hits.hits",
        "id": "_source.doc_id",
        "score": "_score",
        "errors": ERROR_PATHS,
    }


@pytest.mark.parametrize(
    ("config", "field", "message"),
    [
        ({"preset": "elasticsearch"}, "url", "url is required"),
        ({"preset": "elastic", "url": "http://127.0.0.1/"}, "preset", "preset must be one of"),
        ({"preset": "solr", "url": "ftp://127.0.0.1/"}, "url", "http:// or https://"),
        ({"preset": "solr", "url": "http://127.0.0.1/s#x"}, "url", "must not have a #fragment"),
        (
            {"preset": "solr", "url": "http://127.0.0.1/", "request": {"method": "PUT"}},
            "request.method",
            "GET or POST",
        ),
        (
            {"preset": "solr", "url": "http://127.0.0.1/", "request": {"params": {"q": "{{qestion}}"}}},
            "request.params.q",
            "unknown placeholder {{qestion}}",
        ),
        (
            {"preset": "elasticsearch", "url": "http://127.0.0.1/", "request": {"body": {"{{question}}": 1}}},
            "request.body.{{question}}",
            "placeholders go in values",
        ),
        (
            {"preset": "elasticsearch", "url": "http://127.0.0.1/", "request": {"body": {"size": 10}}},
            "request",
            "no {{question}} placeholder",
        ),
        (
            {"preset": "solr", "url": "http://127.0.0.1/", "request": {"params": {"q": {"nested": 1}}}},
            "request.params",
            "parameter names to text",
        ),
        (
            {"preset": "solr", "url": "http://127.0.0.1/", "request": {"headers": {"X-Key": "a\nb"}}},
            "request.headers",
            "one-line text",
        ),
        (
            {"preset": "solr", "url": "http://127.0.0.1/", "request": {"bdy": {}}},
            "request.bdy",
            "unknown request setting",
        ),
        (
            {"preset": "custom", "url": "http://127.0.0.1/", "request": {"body": {"q": "{{question}}"}}},
            "response.hits",
            "dotted path",
        ),
        (
            {"preset": "solr", "url": "http://127.0.0.1/", "response": {"id": "docs..id"}},
            "response.id",
            "dotted path",
        ),
        (
            {"preset": "solr", "url": "http://127.0.0.1/", "response": {"errors": "error.msg"}},
            "response.errors",
            "list of dotted paths",
        ),
        ({"preset": "solr", "url": "http://127.0.0.1/", "response": []}, "response", "JSON object"),
        ({"preset": "solr", "url": "http://127.0.0.1/", "timeout": 0}, "timeout", "above 0"),
        ({"preset": "solr", "url": "http://127.0.0.1/", "retries": 9}, "retries", "0 to 5"),
        ({"preset": "solr", "url": "http://127.0.0.1/", "auth_header": "a\nb"}, "auth_header", "one line"),
        ({"preset": "solr", "url": "http://127.0.0.1/", "timout": 3}, "timout", "unknown setting"),
    ],
)
def test_engine_config_errors_name_the_field(config, field, message):
    found = errors(config)

    assert message in found[field][0], found


def test_engine_config_url_with_credentials_is_refused_without_quoting_them():
    found = errors({"preset": "solr", "url": "http://admin:s3cret@127.0.0.1:8983/solr/a/select"})

    assert "put them in auth_header" in found["url"][0]
    assert "s3cret" not in json.dumps(found)


def test_engine_config_url_refused_by_the_outbound_policy(settings):
    settings.OUTBOUND_ALLOW_PRIVATE = False

    found = errors({"preset": "elasticsearch", "url": "http://169.254.169.254/latest/_search"})

    assert "link-local or cloud metadata" in found["url"][0]


def test_fill_template_fills_structurally_and_rows_becomes_a_number():
    template = {
        "size": "{{rows}}",
        "q": ["{{question}}", "say: {{ question }} ({{rows}})"],
        "n": 3,
        "b": False,
    }

    filled = fill_template(template, question=NASTY, rows=7)

    assert filled == {"size": 7, "q": [NASTY, f"say: {NASTY} (7)"], "n": 3, "b": False}
    assert json.loads(json.dumps(filled)) == filled  # the text survives serialising as it is
    assert template["size"] == "{{rows}}"  # the template itself is untouched


def test_fill_params_repeats_list_values_and_keeps_text_raw_for_encoding():
    pairs = fill_params({"q": "{{question}}", "fq": ["a:1", "b:{{rows}}"], "rows": 5}, question=NASTY, rows=5)

    assert pairs == [("q", NASTY), ("fq", "a:1"), ("fq", "b:5"), ("rows", "5")]


def test_redacted_engine_config_masks_auth_header_and_header_values():
    config = validate_engine_config(
        {
            "preset": "elasticsearch",
            "url": "http://127.0.0.1:9200/a/_search",
            "auth_header": "ApiKey c2VjcmV0",
            "request": {"headers": {"X-Tenant": "t-secret"}},
        }
    )

    shown = redacted_config(config)

    assert shown["auth_header"] == MASK
    assert shown["request"]["headers"] == {"X-Tenant": MASK}
    assert "c2VjcmV0" not in json.dumps(shown) and "t-secret" not in json.dumps(shown)
    assert config["auth_header"] == "ApiKey c2VjcmV0"  # the stored config is not changed


def test_keep_engine_secrets_puts_stored_values_back_for_masks():
    old = {"auth_header": "ApiKey k", "request": {"headers": {"X-Tenant": "t1"}}}
    new = {"auth_header": MASK, "request": {"headers": {"X-Tenant": MASK, "X-New": "n"}}}

    assert keep_engine_secrets(new, old) == {
        "auth_header": "ApiKey k",
        "request": {"headers": {"X-Tenant": "t1", "X-New": "n"}},
    }


def test_keep_engine_secrets_refuses_a_mask_with_nothing_stored():
    with pytest.raises(ValidationError) as info:
        keep_engine_secrets({"request": {"headers": {"X-Other": MASK}}}, {"request": {}})

    assert "X-Other is masked" in info.value.message_dict["request.headers"][0]


def test_engine_config_form_and_body_together_is_an_error():
    found = errors(
        {"preset": "solr", "url": "http://127.0.0.1/", "request": {"form": {"q": "{{question}}"}, "body": {}}}
    )

    assert found["request.form"] == ["request has both a form and a JSON body: give one of them."]


def test_engine_config_form_holds_the_question():
    cleaned = validate_engine_config(
        {
            "preset": "solr",
            "url": "http://127.0.0.1/",
            "request": {"method": "POST", "params": {}, "form": {"q": "{{question}}"}},
        }
    )

    assert cleaned["request"] == {"method": "POST", "form": {"q": "{{question}}"}}
