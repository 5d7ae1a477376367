"""Fixtures of the rankers' tests: the real OpenSearch and Solr nodes (and Solr with LTR), once per session
(real_engines.py), and an OpenSearch engine ranker trained once per session (trained_engine.py)."""

from tests.rankers.real_engines import opensearch, opensearch_vectors, solr, solr_ltr, solr_vectors
from tests.rankers.trained_engine import opensearch_trained

__all__ = ["opensearch", "opensearch_trained", "opensearch_vectors", "solr", "solr_ltr", "solr_vectors"]
