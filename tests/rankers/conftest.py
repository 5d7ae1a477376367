"""Fixtures of the rankers' tests: the real OpenSearch and Solr nodes (and Solr with LTR), once per session (real_engines.py)."""

from tests.rankers.real_engines import opensearch, solr, solr_ltr

__all__ = ["opensearch", "solr", "solr_ltr"]
