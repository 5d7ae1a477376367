"""Checking a ranker's config JSON, per kind."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from rankers.config import redacted_config, validate_ranker_config


def errors(kind, config):
    with pytest.raises(ValidationError) as info:
        validate_ranker_config(kind=kind, config=config)
    return info.value.message_dict


def test_http_config_minimal_gets_defaults():
    assert validate_ranker_config(kind="http", config={"url": " https://ranker.example.com/rank "}) == {
        "url": "https://ranker.example.com/rank",
        "timeout": 10.0,
        "retries": 2,
    }


def test_http_config_full_is_kept():
    config = {
        "url": "http://127.0.0.1:8077/",
        "headers": {"X-Team": "ir"},
        "auth_header": "Bearer s3cret",
        "timeout": 2.5,
        "retries": 0,
    }

    assert validate_ranker_config(kind="http", config=config) == config


@pytest.mark.parametrize(
    ("config", "field", "message"),
    [
        ({}, "url", "url is required"),
        ({"url": ""}, "url", "url is required"),
        ({"url": "ftp://x.example/"}, "url", "http:// or https://"),
        ({"url": "http://"}, "url", "with a host"),
        ({"url": "http://x:notaport/"}, "url", "with a host"),
        ({"url": 5}, "url", "url is required"),
        ({"url": "http://x/", "timeout": 0}, "timeout", "above 0 and at most 120"),
        ({"url": "http://x/", "timeout": "5"}, "timeout", "above 0 and at most 120"),
        ({"url": "http://x/", "timeout": 500}, "timeout", "above 0 and at most 120"),
        ({"url": "http://x/", "retries": -1}, "retries", "from 0 to 5"),
        ({"url": "http://x/", "retries": 1.5}, "retries", "from 0 to 5"),
        ({"url": "http://x/", "retries": True}, "retries", "from 0 to 5"),
        ({"url": "http://x/", "headers": ["X"]}, "headers", "object of header names"),
        ({"url": "http://x/", "headers": {"Bad Name": "v"}}, "headers", "object of header names"),
        ({"url": "http://x/", "headers": {"X": 1}}, "headers", "object of header names"),
        ({"url": "http://x/", "auth_header": "a\nb"}, "auth_header", "one line"),
        ({"url": "http://x/", "timout": 5}, "timout", "unknown setting 'timout'"),
    ],
)
def test_http_config_invalid_names_the_field(config, field, message):
    found = errors("http", config)

    assert list(found) == [field]
    assert message in found[field][0]


def test_http_config_reports_every_bad_field_at_once():
    assert sorted(errors("http", {"timeout": -1, "retries": 9})) == ["retries", "timeout", "url"]


def test_builtin_config_defaults_and_bounds():
    assert validate_ranker_config(kind="builtin", config={}) == {"candidates": 100}
    assert validate_ranker_config(kind="builtin", config={"candidates": 10}) == {"candidates": 10}
    assert "from 10 to 1000" in errors("builtin", {"candidates": 5})["candidates"][0]
    assert "unknown setting 'url'" in errors("builtin", {"url": "http://x/"})["url"][0]


def test_config_not_an_object_or_unknown_kind():
    assert errors("http", ["url"]) == {"config": ["Config must be a JSON object."]}
    assert "kind must be one of builtin, http" in errors("solr", {})["kind"][0]


def test_redacted_config_masks_secrets():
    shown = redacted_config({"url": "http://x/", "auth_header": "Bearer s3cret", "headers": {"X-Key": "k"}})

    assert shown == {"url": "http://x/", "auth_header": "********", "headers": {"X-Key": "********"}}
