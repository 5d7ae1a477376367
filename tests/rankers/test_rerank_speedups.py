"""The reranker's features and RM3 signal, computed faster for ranker_server (no loop over candidates, only
the candidates' terms read), are bit for bit what the loops they replaced computed: a version trained
before ranks exactly as it did. The replaced code is kept here, as it was, to compare against."""

from __future__ import annotations

import random

import numpy as np
import pytest
from scipy import sparse

from corpus.formats.records import AnswerRecord
from corpus.services import collection_create
from rankers.features import FEATURE_NAMES, candidate_features
from rankers.index import CollectionIndex, load_index
from rankers.rm3 import rm3_scores, rows_terms, term_frequency_matrix, weighted_bm25
from rankers.signals import RM3_FEEDBACK_DOCS, RM3_ORIGINAL_WEIGHT, RM3_TERMS, candidate_signals
from rankers.text import tokenize
from tests.rankers.rankers_support import *  # noqa: F403 - fixtures (model_dir)
from trainer.services import collection_import

pytestmark = pytest.mark.django_db

WORDS = [
    "boundary",
    "layer",
    "flow",
    "plate",
    "shock",
    "wave",
    "heat",
    "transfer",
    "cone",
    "supersonic",
    "laminar",
    "turbulent",
    "pressure",
    "gradient",
    "wing",
    "body",
    "drag",
    "lift",
    "mach",
    "number",
    "nozzle",
    "jet",
    "buckling",
    "shell",
    "cylinder",
    "stress",
    "thermal",
]


# ------------------------------------------------------------------------------ the code replaced


def features_before(
    index: CollectionIndex, terms: list[str], candidates: np.ndarray, bm25_both: np.ndarray
) -> np.ndarray:
    n = len(candidates)
    features = np.zeros((n, len(FEATURE_NAMES)), dtype=np.float32)
    if n == 0:
        return features
    term_ids = index.term_ids(terms)
    distinct = list(dict.fromkeys(term_ids))
    query_terms = set(distinct)
    bigrams = {(a, b) for a, b in zip(term_ids, term_ids[1:], strict=False)}
    idf_total = float(index.idf[distinct].sum()) if distinct else 0.0
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


def tf_before(offsets, flat, rows, vocabulary_size: int) -> sparse.csr_matrix:
    offsets = np.asarray(offsets, dtype=np.int64)
    flat = np.asarray(flat, dtype=np.int64)
    rows = np.asarray(rows, dtype=np.int64)
    starts, ends = offsets[rows], offsets[rows + 1]
    index = np.concatenate([np.arange(s, e) for s, e in zip(starts, ends, strict=True)] or [np.zeros(0, int)])
    indptr = np.concatenate([[0], np.cumsum(ends - starts)])
    matrix = sparse.csr_matrix(
        (np.ones(len(index), dtype=np.float64), flat[index].astype(np.int32), indptr),
        shape=(len(rows), vocabulary_size),
    )
    matrix.sum_duplicates()
    return matrix


def rm3_before(
    index: CollectionIndex, term_ids: list[int], positions: np.ndarray, bm25: np.ndarray
) -> np.ndarray:
    """RM3 as ``candidate_signals`` computed it: every answer's terms, the whole vocabulary sorted."""
    tf = tf_before(index.doc_offsets, index.doc_terms, positions, len(index.idf))
    feedback = min(RM3_FEEDBACK_DOCS, len(positions))
    scores = bm25[positions[:feedback]].astype(np.float64)
    vocabulary = tf.shape[1]
    query = np.asarray(term_ids, dtype=np.int64)
    p_query = np.bincount(query, minlength=vocabulary).astype(np.float64)
    if p_query.sum() > 0:
        p_query /= p_query.sum()
    fb = sparse.csr_matrix(tf[:feedback], dtype=np.float64)
    rm1 = np.zeros(vocabulary)
    lengths = np.asarray(fb.sum(axis=1)).ravel()
    usable = lengths > 0
    if fb.shape[0] and usable.any():
        weight = scores if scores[usable].sum() > 0 else np.ones_like(scores)
        weight = np.where(usable, weight, 0.0)
        weight = weight / weight.sum()
        rm1 = np.asarray(fb.T @ (weight / np.where(usable, lengths, 1.0))).ravel()
        order = np.lexsort((np.arange(vocabulary), -rm1))
        keep = order[:RM3_TERMS]
        keep = keep[rm1[keep] > 0]
        trimmed = np.zeros(vocabulary)
        trimmed[keep] = rm1[keep]
        rm1 = trimmed / trimmed.sum() if trimmed.sum() > 0 else trimmed
    if rm1.sum() == 0:
        combined = p_query
    elif p_query.sum() == 0:
        combined = rm1
    else:
        combined = RM3_ORIGINAL_WEIGHT * p_query + (1 - RM3_ORIGINAL_WEIGHT) * rm1
    terms = np.flatnonzero(combined > 0)
    weights = dict(zip(terms.tolist(), combined[terms].tolist(), strict=True))
    average = float(np.diff(index.doc_offsets).mean())
    return weighted_bm25(weights, tf, index.idf, average)


# ------------------------------------------------------------------------------------------ data


def _text(rng: random.Random, low: int, high: int) -> str:
    # Few distinct words: answers share terms and bigrams, and repeat them.
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(low, high)))


@pytest.fixture
def random_index(model_dir) -> CollectionIndex:
    rng = random.Random(25)
    collection = collection_create(name="Random", slug="random")
    answers = [
        AnswerRecord(
            f"a{i}", "" if i % 7 == 0 else _text(rng, 1, 6), "" if i % 11 == 0 else _text(rng, 0, 60)
        )
        for i in range(400)
    ]
    collection_import(collection=collection, answers=answers)
    return load_index(collection=collection)


def _questions() -> list[str]:
    rng = random.Random(2)
    questions = [_text(rng, 1, 12) for _ in range(300)]
    # One known term; terms repeated; words no answer has; stop words only; nothing at all.
    return [*questions, "shock", "wave wave wave shock", "zebra quokka flow", "the of and", ""]


def _candidates(index: CollectionIndex, bm25: np.ndarray, rng: random.Random) -> np.ndarray:
    """The BM25 top 60, or (one question in four) 60 answers anywhere, some without any term."""
    if rng.random() < 0.25:
        return np.array(rng.sample(range(index.size), 60), dtype=np.int64)
    return np.argsort(-bm25, kind="stable")[:60].astype(np.int64)


def test_candidate_features_are_bit_for_bit_the_loop_replaced(random_index):
    rng = random.Random(7)
    compared = 0
    for text in _questions():
        terms = tokenize(text)
        bm25 = random_index.scores("both", terms)
        candidates = _candidates(random_index, bm25, rng)
        for chosen in (candidates, candidates[:1], candidates[:0]):
            fast = candidate_features(random_index, terms, chosen, bm25)
            before = features_before(random_index, terms, chosen, bm25)
            assert fast.dtype == before.dtype == np.float32
            assert fast.tobytes() == before.tobytes(), text
            compared += len(chosen)
    assert compared > 10_000


def test_rm3_signal_is_bit_for_bit_the_computation_replaced(random_index):
    rng = random.Random(8)
    for text in _questions():
        terms = tokenize(text)
        term_ids = random_index.term_ids(terms)
        bm25 = random_index.scores("both", terms)
        for positions in (_candidates(random_index, bm25, rng), _candidates(random_index, bm25, rng)[:3]):
            fast = candidate_signals(random_index, term_ids, positions, bm25, names=("rm3",))[:, 0]
            assert fast.tobytes() == rm3_before(random_index, term_ids, positions, bm25).tobytes(), text


def test_term_frequency_matrix_of_the_rows_alone_is_the_same_matrix(random_index):
    rng = np.random.default_rng(3)
    vocabulary = len(random_index.idf)
    for _ in range(50):
        rows = rng.choice(random_index.size, size=rng.integers(0, 80), replace=False)
        before = tf_before(random_index.doc_offsets, random_index.doc_terms, rows, vocabulary)
        for fast in (
            term_frequency_matrix(random_index.doc_offsets, random_index.doc_terms, rows, vocabulary),
            term_frequency_matrix(
                *rows_terms(random_index.doc_offsets, random_index.doc_terms, rows),
                np.arange(len(rows)),
                vocabulary,
            ),
        ):
            assert fast.shape == before.shape
            assert fast.indptr.tolist() == before.indptr.tolist()
            assert fast.indices.tolist() == before.indices.tolist()
            assert fast.data.tobytes() == before.data.tobytes()


def test_rm3_scores_expansion_sorts_only_weighted_terms_with_the_same_ties():
    # Six answers over 8 terms; the feedback answers give terms 1, 2 and 5 equal weight: the lower ids win.
    offsets = np.array([0, 2, 4, 6, 8, 10, 12])
    flat = np.array([1, 2, 2, 5, 5, 1, 3, 4, 6, 7, 0, 0])
    tf = term_frequency_matrix(offsets, flat, np.arange(6), 8)
    scores = rm3_scores([3], tf, tf[:3], [1.0, 1.0, 1.0], np.ones(8), 2.0, fb_terms=2, original_weight=0.5)
    # Expanded: term 3 (the question) 0.5, terms 1 and 2 (the two lowest of the tie) 0.25 each.
    norm = 1.2 * (1 - 0.75 + 0.75 * 2 / 2.0)
    one = 1 / (1 + norm)
    assert scores.tolist() == pytest.approx([0.5 * one, 0.25 * one, 0.25 * one, 0.5 * one, 0.0, 0.0])
