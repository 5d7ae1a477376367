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
    # The candidates' terms side by side (numpy, no loop over candidates): row i's are doc[i] in order.
    doc_rows, doc = _gather(index.doc_offsets, index.doc_terms, candidates)
    title_rows, title = _gather(index.title_offsets, index.title_terms, candidates)
    features[:, 9] = np.log1p(np.bincount(doc_rows, minlength=n))
    features[:, 10] = np.bincount(title_rows, minlength=n)
    if not query_terms:
        return features
    wanted = np.array(distinct, dtype=np.int64)
    found_rows, found_terms = _first_found(doc_rows, doc, wanted)
    found = np.bincount(found_rows, minlength=n)
    features[:, 5] = found / query_length
    if idf_total:
        # Per candidate with a query term: the float32 sum of their IDFs, the terms in the order a
        # set of them built in the order of first appearance iterates (as ``set.intersection`` built it
        # in the loop this replaced), so that the sum, and the model's scores, stay bit for bit the same.
        ends = np.cumsum(found)
        for row in np.flatnonzero(found):
            in_doc = set(found_terms[ends[row] - found[row] : ends[row]].tolist())
            features[row, 6] = float(index.idf[list(in_doc)].sum()) / idf_total
    title_found_rows, _ = _first_found(title_rows, title, wanted)
    features[:, 7] = np.bincount(title_found_rows, minlength=n) / query_length
    if bigrams:
        same_row = doc_rows[1:] == doc_rows[:-1]
        width = np.int64(max(int(doc.max(initial=0)), max(term_ids)) + 1)
        pairs = doc[:-1].astype(np.int64) * width + doc[1:]
        wanted_pairs = np.array([a * int(width) + b for a, b in bigrams], dtype=np.int64)
        pair_rows, _ = _first_found(doc_rows[:-1][same_row], pairs[same_row], wanted_pairs)
        features[:, 8] = np.bincount(pair_rows, minlength=n) / len(bigrams)
    return features


def _gather(offsets: np.ndarray, flat: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(row number, term) of every term of the answers at ``rows``, row by row, each answer's in order."""
    starts = offsets[rows]
    lengths = offsets[rows + 1] - starts
    ends = np.cumsum(lengths)
    at = np.arange(int(ends[-1]) if len(ends) else 0) + np.repeat(starts - (ends - lengths), lengths)
    return np.repeat(np.arange(len(rows)), lengths), flat[at]


def _first_found(rows: np.ndarray, values: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct ``wanted`` values each row holds, row by row, each row's in order of first
    appearance: (their rows, the values)."""
    hit = np.flatnonzero(np.isin(values, wanted))
    if not len(hit):
        return hit, values[hit]
    # The first occurrence of each (row, value): unique on one key per pair, then back in order.
    key = rows[hit].astype(np.int64) * (len(wanted) + 1) + np.searchsorted(np.sort(wanted), values[hit])
    _, first = np.unique(key, return_index=True)
    keep = hit[np.sort(first)]
    return rows[keep], values[keep]
