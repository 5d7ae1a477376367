"""Exporting a ranker's model into its search engine: pure parts plus asking the engine for features.

For an engine ranker (OpenSearch, Elasticsearch, Solr presets): a model over features the engine itself
computes, fitted here, written as what the engine applies, with no plugin (a rescore query, a rerank
query) or with the Learning to Rank plugins. Which labels it learns from and what it is measured on is
``trainer.engine_export``'s business.

- ``spec.py``: the features an engine can compute, from the ranker's config; the errors.
- ``fetch.py``: asking the engine for a question's candidates and their feature values.
- ``linear.py``: the linear model over raw feature values, weights >= 0, and its scores.
- ``trees.py``: the LambdaMART tree model, its LTR formats and their split semantics, one evaluator each.
- ``model.py``: the export model, the one JSON-able dict the formats render from.
- ``render/``: the formats: opensearch-rescore, solr-rerank, opensearch-ltr, solr-ltr.
"""
