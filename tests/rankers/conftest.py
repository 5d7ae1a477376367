"""Fixtures of the rankers' tests: the real OpenSearch and Solr nodes, once per session (real_engines.py)."""

from tests.rankers.real_engines import opensearch, opensearch_vectors, solr, solr_vectors

__all__ = ["opensearch", "opensearch_vectors", "solr", "solr_vectors"]
