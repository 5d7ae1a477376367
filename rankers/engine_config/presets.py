"""The presets: the request and response an engine's preset fills in (Elasticsearch, OpenSearch, its hybrid
search, Solr, custom)."""

from __future__ import annotations

import copy
from typing import Any

from rankers.engine_config.templates import QUESTION, ROWS

# Where Elasticsearch/OpenSearch (root_cause first, the most specific) and Solr put their error message.
ERROR_PATHS = ["error.root_cause.0.reason", "error.reason", "error.msg", "error"]
_ES_MAPPING = {"hits": "hits.hits", "id": "_id", "score": "_score", "errors": ERROR_PATHS}
PRESETS: dict[str, dict[str, Any]] = {
    # Query DSL on POST <index>/_search; _source off: only ids and scores are needed.
    "elasticsearch": {
        "request": {
            "method": "POST",
            "body": {
                "size": ROWS,
                "_source": False,
                "query": {"multi_match": {"query": QUESTION, "fields": ["title^2", "text"]}},
            },
        },
        "response": _ES_MAPPING,
    },
    "opensearch": {
        "request": {
            "method": "POST",
            "body": {
                "size": ROWS,
                "_source": False,
                "query": {"multi_match": {"query": QUESTION, "fields": ["title^2", "text"]}},
            },
        },
        "response": _ES_MAPPING,
    },
    # Hybrid search: a lexical and a neural query whose scores a search pipeline (normalization
    # processor) combines. Set the pipeline, the embedding field and the model id to yours.
    "opensearch-hybrid": {
        "request": {
            "method": "POST",
            "params": {"search_pipeline": "nlp-search-pipeline"},
            "body": {
                "size": ROWS,
                "_source": {"excludes": ["passage_embedding"]},
                "query": {
                    "hybrid": {
                        "queries": [
                            {"match": {"text": {"query": QUESTION}}},
                            {
                                "neural": {
                                    "passage_embedding": {
                                        "query_text": QUESTION,
                                        "model_id": "your-model-id",
                                        "k": ROWS,
                                    }
                                }
                            },
                        ]
                    }
                },
            },
        },
        "response": _ES_MAPPING,
    },
    # The standard /select handler over title and text, JSON response. The "simple" query parser with
    # only its WHITESPACE operator takes the question as plain words, as multi_match does: with edismax
    # (or the lucene parser) a question is query syntax: "id:184" searched the id field, a leading "-"
    # asked for every answer without that word, "*" and "^" made wildcards and boosts.
    "solr": {
        "request": {
            "method": "GET",
            "params": {
                "q": QUESTION,
                "defType": "simple",
                "q.operators": "WHITESPACE",
                "qf": "title^2 text",
                "rows": ROWS,
                "fl": "id,score",
                "wt": "json",
            },
        },
        "response": {"hits": "response.docs", "id": "id", "score": "score", "errors": ERROR_PATHS},
    },
    "custom": {"request": {"method": "POST"}, "response": {"errors": ERROR_PATHS}},
}


def preset_config(preset: str) -> dict[str, Any]:
    """The request and response a preset fills in (a copy, to edit)."""
    return copy.deepcopy(PRESETS[preset])
