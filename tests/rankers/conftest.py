"""Fixtures of the rankers' tests: the real OpenSearch and Solr nodes (and Solr with LTR), once per session
(real_engines.py, a plugin of tests/conftest.py: tests/bench uses the OpenSearch node too), and an
OpenSearch engine ranker trained once per session (trained_engine.py)."""

import pytest

from tests.rankers.trained_engine import TRAINED_FIXTURE, opensearch_trained

__all__ = ["opensearch_trained"]


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """The trained engine ranker's committed demo is removed once the files that use it are done (the next
    test is in another file and does not use it): a test after them counts the collections it sees. Its
    fixture is finished as pytest finishes it at the end of the session (so a later test that asked for it
    would get it trained again)."""
    yield
    if nextitem is not None and (nextitem.path == item.path or TRAINED_FIXTURE in nextitem.fixturenames):
        return
    for fixturedef in item.session._fixturemanager.getfixturedefs(TRAINED_FIXTURE, item) or ():
        if fixturedef.cached_result is not None:
            fixturedef.finish(item._request)
