"""The BM25 index of one collection's answers: built with bm25s, persisted under MODEL_DIR, cached in memory.

Three BM25 indexes are kept per collection, over the same answers: title + body (the one retrieval uses),
title alone and body alone (features for the reranker). Beside them, each answer's terms in order
(for coverage and bigram features) and each term's IDF.

An index is identified by a *fingerprint* of the collection's answers: their count, the sum and range of
their ids and their latest ``updated_at`` (plus the tokenizer and index format versions). Adding,
deleting or editing an answer through the services (which stamp ``updated_at``) changes it, so the next
``load_index`` builds a fresh index; one aggregate query checks it, however many answers there are. The
index on disk is written to a temporary directory and renamed into place, so a process never reads a
half-written index and two processes building at once both end up with a complete one.

Every process maps the saved index from disk rather than holding its own copy (issue 37: 0.7 GiB per
million answers in each web worker, Celery worker and ``ranker_server``): the BM25 score matrices, the
terms arrays, the IDF and the answer ids and vocabulary (``rankers.string_table``) are ``.npy`` files
opened with ``mmap_mode="r"``, so the processes share the page cache. One process builds a version (a
file lock per collection); the others wait for it and map what it saved, and so does the builder.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import logging
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import bm25s
import numpy as np
from django.conf import settings
from django.db.models import Count, Max, Min, Sum
from scipy import sparse

from corpus.models import Answer, Collection
from rankers.string_table import Positions, StringTable, load_array
from rankers.text import TOKENIZER_VERSION, tokenize

logger = logging.getLogger(__name__)
# bm25s logs every index build at INFO; ours says it once, with the collection and the time taken.
logging.getLogger("bm25s").setLevel(logging.WARNING)

# 4: every part an .npy file mapped from disk, ids and terms as string tables (3 kept ids in meta.json);
# 3: doc_terms keep their order (2 saved them sorted and de-duplicated)
INDEX_FORMAT = "4"
ARRAYS = ("doc_offsets", "doc_terms", "title_offsets", "title_terms", "idf")
# Classic Okapi parameters; Lucene's IDF (never negative).
BM25_K1 = 1.2
BM25_B = 0.75
FIELDS = ("both", "title", "body")


def _flatten(token_lists: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
    offsets = np.zeros(len(token_lists) + 1, dtype=np.int64)
    offsets[1:] = np.cumsum([len(tokens) for tokens in token_lists])
    flat = np.fromiter((t for tokens in token_lists for t in tokens), dtype=np.int32, count=int(offsets[-1]))
    return offsets, flat


@dataclass
class CollectionIndex:
    """Everything ranking needs about a collection's answers, mapped from disk once saved. Read-only.

    ``terms`` is the vocabulary shared by the three fields: term ``i`` has id ``i`` in each field's
    BM25 score matrix (``bm25s`` keeps the ids it is given), so a query is looked up once, here, and the
    fields' own vocabularies are neither kept nor loaded.
    """

    collection_id: int
    fingerprint: str
    ids: Sequence[str]
    terms: StringTable
    bm25: dict[str, bm25s.BM25 | None]
    # Term ids (in the vocabulary of the title + body index) of each answer, title + body and title only.
    doc_offsets: np.ndarray
    doc_terms: np.ndarray
    title_offsets: np.ndarray
    title_terms: np.ndarray
    idf: np.ndarray
    build_seconds: float = 0.0

    def __post_init__(self) -> None:
        table = self.ids if isinstance(self.ids, StringTable) else StringTable.of(self.ids)
        self.position = Positions(table)
        self.vocab = Positions(self.terms)

    @property
    def size(self) -> int:
        return len(self.ids)

    def term_ids(self, terms: list[str]) -> list[int]:
        """Ids of the terms the collection knows, in order (unknown terms cannot match anything)."""
        found = (self.terms.find(t) for t in terms)
        return [i for i in found if i is not None]

    def scores(self, field: str, terms: list[str]) -> np.ndarray:
        """BM25 score of every answer for the query terms, in one field."""
        index = self.bm25[field]
        known = self.term_ids(terms) if index is not None else []
        if index is None or not known:
            return np.zeros(self.size, dtype=np.float32)
        return np.asarray(index.get_scores_from_ids(known))

    def doc(self, position: int) -> np.ndarray:
        return self.doc_terms[self.doc_offsets[position] : self.doc_offsets[position + 1]]

    def title(self, position: int) -> np.ndarray:
        return self.title_terms[self.title_offsets[position] : self.title_offsets[position + 1]]


def index_fingerprint(*, collection: Collection) -> str:
    """A short hash that changes whenever the collection's answers do (see the module docstring)."""
    facts = Answer.objects.filter(collection=collection).aggregate(
        count=Count("id"), low=Min("id"), high=Max("id"), total=Sum("id"), latest=Max("updated_at")
    )
    latest = facts["latest"].isoformat() if facts["latest"] else ""
    raw = (
        f"{INDEX_FORMAT}|{TOKENIZER_VERSION}|{BM25_K1}|{BM25_B}|{collection.pk}|"
        f"{facts['count']}|{facts['low']}|{facts['high']}|{facts['total']}|{latest}"
    )
    return hashlib.sha256(raw.encode()).hexdigest()[:20]


def index_root(*, collection_id: int) -> Path:
    return Path(settings.MODEL_DIR) / "indexes" / f"collection-{collection_id}"


def _bm25_for(token_ids: list[list[int]], vocab: dict[str, int]) -> bm25s.BM25 | None:
    """A BM25 index of one field, from term ids in the collection's shared vocabulary."""
    if not any(token_ids):
        return None  # bm25s cannot index a field with no terms at all (e.g. no answer has a title)
    index = bm25s.BM25(k1=BM25_K1, b=BM25_B, method="lucene")
    # bm25s adds its empty-query token to the vocabulary it is given: give each field its own copy.
    index.index((token_ids, dict(vocab)), show_progress=False)
    return index


def build_index(*, collection: Collection, fingerprint: str | None = None) -> CollectionIndex:
    """Tokenise every answer and build the three BM25 indexes (in memory; ``save_index`` persists)."""
    started = time.perf_counter()
    fingerprint = fingerprint or index_fingerprint(collection=collection)
    ids: list[str] = []
    titles: list[list[int]] = []
    bodies: list[list[int]] = []
    # One vocabulary (term -> id) for all three fields, so term ids mean the same everywhere.
    vocab: dict[str, int] = {}
    rows = (
        Answer.objects.filter(collection=collection)
        .order_by("id")
        .values_list("external_id", "title", "body")
    )
    for external_id, title, body in rows.iterator(chunk_size=5000):
        ids.append(external_id)
        titles.append([vocab.setdefault(term, len(vocab)) for term in tokenize(title)])
        bodies.append([vocab.setdefault(term, len(vocab)) for term in tokenize(body)])
    both_ids = [t + b for t, b in zip(titles, bodies, strict=True)]
    bm25 = {
        "both": _bm25_for(both_ids, vocab),
        "title": _bm25_for(titles, vocab),
        "body": _bm25_for(bodies, vocab),
    }
    doc_offsets, doc_terms = _flatten(both_ids)
    title_offsets, title_terms = _flatten(titles)
    # Document frequency over title + body (distinct (answer, term) pairs, counted per term);
    # Lucene-style IDF, as BM25 itself uses.
    n = len(ids)
    width = max(len(vocab), 1)
    occurrences = sparse.csr_matrix(
        (np.ones(len(doc_terms), dtype=np.int32), doc_terms.copy(), doc_offsets.copy()), shape=(n, width)
    )
    occurrences.sum_duplicates()  # one entry per (answer, term); in place, hence the copies above
    df = np.bincount(occurrences.indices, minlength=width).astype(np.float64)
    idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
    return CollectionIndex(
        collection_id=collection.pk,
        fingerprint=fingerprint,
        ids=StringTable.of(ids),
        terms=StringTable.of(vocab),  # in id order: a dict keeps its insertion order
        bm25=bm25,
        doc_offsets=doc_offsets,
        doc_terms=doc_terms,
        title_offsets=title_offsets,
        title_terms=title_terms,
        idf=idf,
        build_seconds=time.perf_counter() - started,
    )


def save_index(index: CollectionIndex) -> Path:
    """Write the index under MODEL_DIR atomically (temporary directory, then rename). Returns its path."""
    root = index_root(collection_id=index.collection_id)
    root.mkdir(parents=True, exist_ok=True)
    final = root / index.fingerprint
    if final.exists():
        return final
    tmp = Path(tempfile.mkdtemp(prefix=".building-", dir=root))
    try:
        ids = index.ids if isinstance(index.ids, StringTable) else StringTable.of(index.ids)
        ids.save(tmp, "ids")
        index.terms.save(tmp, "terms")
        for name in ARRAYS:
            np.save(tmp / f"{name}.npy", getattr(index, name))
        for field in FIELDS:
            field_index = index.bm25[field]
            if field_index is not None:
                field_index.save(str(tmp / field))
        # written last: its presence says the rest is there
        (tmp / "meta.json").write_text(json.dumps({"fingerprint": index.fingerprint, "format": INDEX_FORMAT}))
        try:
            os.rename(tmp, final)
        except OSError:
            if not final.exists():
                raise
            # Another process finished the same index first; theirs is identical.
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    # Older fingerprints are stale. Processes that use them hold them in memory, not on disk.
    for other in root.iterdir():
        if other.name != index.fingerprint and not other.name.startswith(".") and other.is_dir():
            shutil.rmtree(other, ignore_errors=True)
    return final


def read_index(*, collection_id: int, path: Path) -> CollectionIndex:
    """The saved index, mapped from disk (nothing of its size is copied into this process)."""
    meta = json.loads((path / "meta.json").read_text())
    if meta.get("format") != INDEX_FORMAT:
        raise ValueError(f"index format {meta.get('format')}, expected {INDEX_FORMAT}")
    bm25 = {
        field: bm25s.BM25.load(str(path / field), mmap=True, load_vocab=False)
        if (path / field).exists()
        else None
        for field in FIELDS
    }
    return CollectionIndex(
        collection_id=collection_id,
        fingerprint=meta["fingerprint"],
        ids=StringTable.load(path, "ids"),
        terms=StringTable.load(path, "terms"),
        bm25=bm25,
        **{name: load_array(path / f"{name}.npy") for name in ARRAYS},  # type: ignore[arg-type]
    )


def _read(collection_id: int, path: Path) -> CollectionIndex | None:
    if not (path / "meta.json").exists():
        return None
    try:
        return read_index(collection_id=collection_id, path=path)
    except (OSError, ValueError, KeyError) as exc:
        logger.warning("index %s unreadable (%s); rebuilding", path, exc)
        return None


_cache: dict[int, CollectionIndex] = {}
_locks: dict[int, threading.Lock] = {}
_locks_guard = threading.Lock()


def load_index(*, collection: Collection) -> CollectionIndex:
    """The collection's current index: from memory, else from disk, else built (and saved) now."""
    fingerprint = index_fingerprint(collection=collection)
    cached = _cache.get(collection.pk)
    if cached is not None and cached.fingerprint == fingerprint:
        return cached
    with _locks_guard:
        lock = _locks.setdefault(collection.pk, threading.Lock())
    with lock:
        cached = _cache.get(collection.pk)
        if cached is not None and cached.fingerprint == fingerprint:
            return cached
        root = index_root(collection_id=collection.pk)
        path = root / fingerprint
        index = _read(collection.pk, path)
        if index is None:
            root.mkdir(parents=True, exist_ok=True)
            # One process builds a version; the others wait here, then map what it saved.
            with open(root / ".lock", "w") as lock_file:
                fcntl.flock(lock_file, fcntl.LOCK_EX)
                index = _read(collection.pk, path)
                if index is None:
                    built = build_index(collection=collection, fingerprint=fingerprint)
                    if path.exists():
                        shutil.rmtree(path, ignore_errors=True)  # unreadable (an older format)
                    save_index(built)
                    logger.info(
                        "built BM25 index of %s (%d answers) in %.2f s",
                        collection.slug,
                        built.size,
                        built.build_seconds,
                    )
                    seconds = built.build_seconds
                    del built  # map the saved one: this process keeps no copy either
                    index = read_index(collection_id=collection.pk, path=path)
                    index.build_seconds = seconds
        _cache[collection.pk] = index
        return index


_known: dict[int, tuple[str, frozenset[str]]] = {}


def known_answer_ids(*, collection_id: int) -> frozenset[str]:
    """External ids of the collection's answers, cached until they change (same fingerprint as the index)."""
    collection = Collection(pk=collection_id)
    fingerprint = index_fingerprint(collection=collection)
    cached = _known.get(collection_id)
    if cached is not None and cached[0] == fingerprint:
        return cached[1]
    ids = frozenset(Answer.objects.filter(collection_id=collection_id).values_list("external_id", flat=True))
    _known[collection_id] = (fingerprint, ids)
    return ids


def forget_indexes() -> None:
    """Forget indexes held in memory (the next load reads them from disk)."""
    _cache.clear()
    _known.clear()
