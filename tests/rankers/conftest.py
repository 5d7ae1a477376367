"""Fixtures of the rankers' tests: the real OpenSearch and Solr nodes, once per session (real_engines.py)."""

from tests.rankers.real_engines import opensearch, solr

__all__ = ["opensearch", "solr"]
