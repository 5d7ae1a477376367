"""The `rankers.index_build` task builds a collection's index ahead of use."""

from __future__ import annotations

import pytest

from rankers.builtin import clear_ranker_caches
from rankers.index import index_root, load_index
from rankers.tasks import index_build
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.rankers.rankers_support import tiny_answers

pytestmark = pytest.mark.django_db


def test_index_build_task_writes_index_a_new_process_reads(collection, model_dir):
    tiny_answers(collection)

    fingerprint = index_build.run(collection_id=collection.pk)

    assert (index_root(collection_id=collection.pk) / fingerprint / "meta.json").exists()
    clear_ranker_caches()
    assert load_index(collection=collection).build_seconds == 0.0  # read from disk, not rebuilt


def test_index_build_task_missing_collection_does_nothing(model_dir):
    assert index_build.run(collection_id=987654) is None
