"""Methods, training candidates and features in words: what a version learned, as the rankers pages
say it."""

from __future__ import annotations

from rankers.models import RankerKind

METHOD_WORDS = {
    "bm25": "plain BM25",
    "fusion": "BM25 + semantic similarity, untrained fusion",
    "learned-fusion": "learned fusion of BM25, semantic similarity, RM3 and rating propagation",
    "lambdamart": "LambdaMART",
}

# An engine (or http) ranker's trained versions rerank its service's top answers; {first}: whose.
RERANK_WORDS = {
    "fusion": "{first} top answers reranked by {first} score + semantic similarity, untrained fusion",
    "learned-fusion": "{first} top answers reranked by a learned fusion of {first} score, BM25, semantic "
    "similarity, RM3 and rating propagation",
    "lambdamart": "{first} top answers reranked by LambdaMART",
}

FEATURE_WORDS = {
    "engine": "the engine's own score",
    "engine_rank": "the engine's rank (1 / rank)",
    "cosine": "semantic similarity of question and answer (all-MiniLM-L6-v2 embeddings)",
    "rm3": "BM25 with the question expanded from its top answers (RM3)",
    "propagation": "stars that similar training questions gave this answer",
    "bm25": "BM25 score of title + body",
    "bm25_title": "BM25 score of the title",
    "bm25_body": "BM25 score of the body",
    "bm25_rank": "BM25 rank",
    "bm25_ratio": "BM25 score relative to the best candidate",
    "coverage": "share of question terms in the answer",
    "idf_coverage": "share of question terms in the answer, weighted by rarity (IDF)",
    "title_coverage": "share of question terms in the title",
    "bigram_overlap": "share of the question's adjacent word pairs found adjacent",
    "doc_length": "answer length",
    "title_length": "title length",
    "query_length": "question length",
}


def _candidate_words(name: str, engine: bool) -> str:
    """A training candidate in words; an engine ranker's rerank the engine's answers."""
    if engine and name in RERANK_WORDS:
        return RERANK_WORDS[name].format(first="the engine's")
    if engine and name == "engine":
        return "the engine's own order"
    return METHOD_WORDS.get(name, name)


def method_text(method: str, kind: str) -> str:
    if kind in (RankerKind.ENGINE, RankerKind.HTTP) and method in RERANK_WORDS:
        return RERANK_WORDS[method].format(
            first="the engine's" if kind == RankerKind.ENGINE else "the service's"
        )
    if method in METHOD_WORDS:
        return METHOD_WORDS[method]
    if not method or method == "engine":
        if kind == RankerKind.ENGINE:
            return "the search engine's own ranking"
        return "the HTTP service's own model" if kind == RankerKind.HTTP else "not recorded"
    return method
