"""An OpenSearch engine ranker trained on the Cranfield demo once per test session, for the tests that need one
trained (tests/rankers/test_real_engine_reranker.py, test_ranker_server_engine.py): their trainings were
the same but for the copy of the answers each wrote into, a training of ~15 s of both cores each.

``opensearch_trained``: the demo (committed: the servers the tests start are other processes) with a ranker
``opensearch`` whose v1 is the engine as it is (its champion) and v2 the trained reranker, as ``ranker_train``
left them; its model files in ``model_dir`` (a test that ranks with it sets ``MODEL_DIR`` to it). The demo is
loaded under its own slug, whose hash splits its questions, then renamed ``TRAINED_SLUG``. The training's
export wrote the answers' vectors into ``node``, a fresh copy of the answers on the session's OpenSearch node
(tests/rankers/real_engines.py), which re-adds them (their order among equal scores may change):
``first_answers`` is the node's top 50 for each training question, read before.

A test must not change the ranker or its versions for good: another test reads them after it (a test in a
transaction, such as ``version_decide``'s, is rolled back; ``test_ranker_server_engine`` serves a copy of v2
under a ranker of its own). Requested as a test's parameter (not by ``getfixturevalue`` in its body), so it is
set up before the test's transaction begins, whose rollback would take the committed demo with it. The
demo is removed as soon as the files that use it are done (tests/rankers/conftest.py), not at the session's
end: the tests that run after them on the same worker count the collections they see.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model

from corpus.models import Collection, Question, Split
from rankers.base import RankQuery
from rankers.builtin import clear_ranker_caches
from rankers.engine import EngineBackend
from rankers.engine_config import validate_engine_config
from rankers.services import ranker_create
from tests.rankers.real_engines import OpenSearch, opensearch_copy
from trainer.services import ranker_train

TRAINED_SLUG = "engine-trained"
TRAINED_FIXTURE = "opensearch_trained"


@dataclass(frozen=True)
class TrainedEngineRanker:
    collection_id: int
    ranker_id: int
    version_id: int  # v2, the trained reranker
    node: OpenSearch
    model_dir: Path
    first_answers: dict[int, list[str]]  # question id -> the node's top 50 ids, before the training


def engine_config(node) -> dict:
    """An engine ranker's config for an OpenSearch or Solr node of tests/rankers/real_engines.py."""
    if isinstance(node, OpenSearch):
        return {"preset": "opensearch", "url": node.search_url, "retries": 0}
    return {"preset": "solr", "url": node.select_url, "retries": 0}


def first_answers(collection: Collection, node) -> dict[int, list[str]]:
    """The node's own top 50 answer ids for each training question of ``collection``."""
    engine = EngineBackend(config=validate_engine_config(engine_config(node)))
    questions = Question.objects.filter(collection=collection, split=Split.TRAIN).order_by("pk")
    return {q.pk: engine.rank(RankQuery(q.external_id, q.text), 50).ids for q in questions}


@pytest.fixture(scope="session")
def opensearch_trained(
    opensearch, django_db_setup, django_db_blocker, demo_vectors, demo_load, tmp_path_factory
) -> Iterator[TrainedEngineRanker]:
    """The demo with an OpenSearch engine ranker trained once for the session (see the module's docstring)."""
    node = opensearch_copy(opensearch)
    model_dir = tmp_path_factory.mktemp("trained-engine-models")
    before = (settings.MODEL_DIR, settings.EMBEDDINGS_DIR)
    settings.MODEL_DIR, settings.EMBEDDINGS_DIR = model_dir, demo_vectors
    clear_ranker_caches()
    try:
        with django_db_blocker.unblock():
            users_before = get_user_model().objects.order_by("-pk").values_list("pk", flat=True).first() or 0
            # Loaded as bootstrap_demo loads it, under the demo's slug: a question's split hashes the
            # collection's slug (corpus.services.split_for), and the tests' figures are those of the demo's
            # test questions.
            demo = demo_load()
            assert demo is not None
            ranker = ranker_create(
                collection=demo, name="opensearch", kind="engine", config=engine_config(node)
            )
            first = first_answers(demo, node)
            version = ranker_train(ranker=ranker)
            # Renamed once trained: the session's other tests load a demo of their own under its slug.
            Collection.objects.filter(pk=demo.pk).update(slug=TRAINED_SLUG)
            # The demo's import rater: removed with the demo (a test after it counts the users it sees).
            users = list(get_user_model().objects.filter(pk__gt=users_before).values_list("pk", flat=True))
    finally:
        settings.MODEL_DIR, settings.EMBEDDINGS_DIR = before
        clear_ranker_caches()
    try:
        yield TrainedEngineRanker(demo.pk, ranker.pk, version.pk, node, model_dir, first)
    finally:
        with django_db_blocker.unblock():
            Collection.objects.filter(pk=demo.pk).delete()
            get_user_model().objects.filter(pk__in=users).delete()
