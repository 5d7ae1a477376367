"""Fixtures of the rankers' tests: the real OpenSearch and Solr nodes (and Solr with LTR), once per session (real_engines.py)."""

from tests.rankers.real_engines import opensearch, opensearch_vectors, solr, solr_ltr, solr_vectors

__all__ = ["opensearch", "opensearch_vectors", "solr", "solr_ltr", "solr_vectors"]
