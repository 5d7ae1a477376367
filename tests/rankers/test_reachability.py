"""Whether a ranker's service answers now (``rankers.reachability.service_silence``): asked once, quickly,
against real sockets (a closed port, a real engine), and cached briefly per config."""

from __future__ import annotations

import time

import pytest
from django.core.cache import cache

from corpus.services import collection_create
from rankers.reachability import PROBE_SECONDS, service_silence
from rankers.services import ranker_config_update, ranker_create
from tests.rankers.engine_support import DOCS, es_config
from tests.servers import engine_running, free_port

pytestmark = pytest.mark.django_db

REFUSED = "it cannot be reached: the connection was refused (nothing is listening at that address and port)"


@pytest.fixture(autouse=True)
def _empty_cache():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture(scope="module")
def engine():
    with engine_running(DOCS) as server:
        yield server


def test_service_silence_closed_port_says_refused_in_words_at_once():
    collection = collection_create(name="C", slug="c")
    ranker = ranker_create(
        collection=collection, name="E", kind="engine", config=es_config(f"http://127.0.0.1:{free_port()}")
    )

    started = time.monotonic()
    silence = service_silence(ranker=ranker)

    assert silence == REFUSED
    assert time.monotonic() - started < PROBE_SECONDS


def test_service_silence_engine_answering_is_empty_and_cached_until_the_config_changes(engine):
    collection = collection_create(name="C", slug="c")
    ranker = ranker_create(collection=collection, name="E", kind="engine", config=es_config(engine.url))

    assert service_silence(ranker=ranker) == ""
    with engine_running(DOCS) as other:
        ranker = ranker_config_update(ranker=ranker, config=es_config(other.url))
        assert service_silence(ranker=ranker) == ""
    # The other engine has stopped: its answer stays cached for a while, a fresh check asks again.
    assert service_silence(ranker=ranker) == ""
    assert service_silence(ranker=ranker, fresh=True) == REFUSED


def test_service_silence_builtin_ranker_is_empty_without_asking():
    collection = collection_create(name="C", slug="c")
    ranker = ranker_create(collection=collection, name="B", kind="builtin")

    assert service_silence(ranker=ranker) == ""
