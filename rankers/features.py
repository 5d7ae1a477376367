"""Features the built-in reranker (LambdaMART) scores each BM25 candidate with.

One row per (question, candidate answer). All are lexical: they say how the question's terms (after
tokenising, stop-word removal and stemming, see ``text.py``) meet the answer's. Within one question the
model only compares candidates, so features relative to the question's other candidates (rank, ratio)
matter as much as absolute ones.

=================  ===========================================================================
feature            meaning
=================  ===========================================================================
bm25               BM25 score of the answer's title + body (the score retrieval sorted by)
bm25_title         BM25 score of the title alone
bm25_body          BM25 score of the body alone
bm25_rank          the answer's position in BM25's candidate list (1 = best)
bm25_ratio         bm25 divided by the best candidate's bm25 (1.0 for the top candidate)
coverage           share of the question's distinct terms found in title + body (0–1)
idf_coverage       the same, each term weighted by its IDF: rare terms count more (0–1)
title_coverage     share of the question's distinct terms found in the title (0–1)
bigram_overlap     share of the question's adjacent term pairs found adjacent in title + body
                   (0–1; 0 for a one-term question)
doc_length         terms in title + body, log(1 + n)
title_length       terms in the title
query_length       distinct terms in the question
=================  ===========================================================================
"""

from __future__ import annotations

import numpy as np

from rankers.index import CollectionIndex

FEATURE_NAMES = (
    "bm25",
    "bm25_title",
    "bm25_body",
    "bm25_rank",
    "bm25_ratio",
    "coverage",
    "idf_coverage",
    "title_coverage",
    "bigram_overlap",
    "doc_length",
    "title_length",
    "query_length",
)
FEATURE_VERSION = "1"


def candidate_features(
    index: CollectionIndex, terms: list[str], candidates: np.ndarray, bm25_both: np.ndarray
) -> np.ndarray:
    """Feature matrix, shape (len(candidates), len(FEATURE_NAMES)), for candidates in BM25 order.

    ``candidates`` are answer positions in the index, best BM25 first; ``bm25_both`` the title + body
    BM25 scores of every answer (already computed by retrieval).
    """
    n = len(candidates)
    features = np.zeros((n, len(FEATURE_NAMES)), dtype=np.float32)
    if n == 0:
        return features
    term_ids = index.term_ids(terms)
    distinct = list(dict.fromkeys(term_ids))
    query_terms = set(distinct)
    bigrams = {(a, b) for a, b in zip(term_ids, term_ids[1:], strict=False)}
    idf_total = float(index.idf[distinct].sum()) if distinct else 0.0
    # Terms the collection does not know can't match; they still count in the question's length.
    query_length = len(set(terms))

    both = bm25_both[candidates]
    top = float(both[0]) if both[0] > 0 else 1.0
    features[:, 0] = both
    features[:, 1] = index.scores("title", terms)[candidates]
    features[:, 2] = index.scores("body", terms)[candidates]
    features[:, 3] = np.arange(1, n + 1)
    features[:, 4] = both / top
    features[:, 11] = query_length
    for row, position in enumerate(candidates):
        doc = index.doc(position)
        title = index.title(position)
        features[row, 9] = np.log1p(len(doc))
        features[row, 10] = len(title)
        if not query_terms:
            continue
        doc_set = query_terms.intersection(doc.tolist())
        features[row, 5] = len(doc_set) / query_length if query_length else 0.0
        features[row, 6] = float(index.idf[list(doc_set)].sum()) / idf_total if doc_set and idf_total else 0.0
        features[row, 7] = len(query_terms.intersection(title.tolist())) / query_length
        if bigrams and len(doc) > 1:
            doc_list = doc.tolist()
            doc_bigrams = set(zip(doc_list, doc_list[1:], strict=False))
            features[row, 8] = len(bigrams & doc_bigrams) / len(bigrams)
    return features
