"""The `trainer.index_build` task builds a collection's index ahead of use."""

from __future__ import annotations

import pytest

from tests.trainer.rankers_support import *  # noqa: F403 - fixtures and helpers
from tests.trainer.rankers_support import tiny_answers
from trainer.rankers.index import clear_index_cache, index_root, load_index
from trainer.tasks import index_build

pytestmark = pytest.mark.django_db


def test_index_build_task_writes_index_a_new_process_reads(collection, model_dir):
    tiny_answers(collection)

    fingerprint = index_build.run(collection_id=collection.pk)

    assert (index_root(collection_id=collection.pk) / fingerprint / "meta.json").exists()
    clear_index_cache()
    assert load_index(collection=collection).build_seconds == 0.0  # read from disk, not rebuilt


def test_index_build_task_missing_collection_does_nothing(model_dir):
    assert index_build.run(collection_id=987654) is None
