"""The data migration that moves saved Solr presets from edismax to the simple parser."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from rankers.models import Ranker, RankerKind

pytestmark = pytest.mark.django_db

migration = importlib.import_module("rankers.migrations.0004_solr_preset_simple_parser")


def _solr(collection, name: str, params: dict, preset: str = "solr") -> Ranker:
    config = {
        "preset": preset,
        "url": "http://solr.test/solr/answers",
        "request": {"method": "GET", "params": params},
    }
    return Ranker.objects.create(collection=collection, name=name, kind=RankerKind.ENGINE, config=config)


def test_solr_preset_migration_moves_only_untouched_edismax_presets(collection):
    old = _solr(collection, "old", {"q": "{{question}}", "defType": "edismax", "qf": "title^2 text"})
    edited = _solr(collection, "edited", {"q": "{{question}}", "defType": "edismax", "qf": "body"})
    custom = _solr(collection, "custom", {"defType": "edismax", "qf": "title^2 text"}, preset="custom")

    migration.forwards(apps, None)

    for ranker in (old, edited, custom):
        ranker.refresh_from_db()
    assert old.config["request"]["params"] == {
        "q": "{{question}}",
        "defType": "simple",
        "qf": "title^2 text",
        "q.operators": "WHITESPACE",
    }
    assert edited.config["request"]["params"]["defType"] == "edismax"
    assert custom.config["request"]["params"] == {"defType": "edismax", "qf": "title^2 text"}
