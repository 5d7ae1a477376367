"""Answer and question embeddings of a collection: the builtin ranker's semantic signal.

An answer's vector is the embedding (``rankers.embedding``) of its title and body. The vectors of one
state of a collection (its index fingerprint) are stored under ``MODEL_DIR/embeddings/collection-<id>/``
as one matrix whose rows follow the BM25 index's answer order (``vectors-<fingerprint>.npy``), beside
each row's text hash (``hashes-<fingerprint>.npy``). A new state re-encodes only the answers whose text
changed: the others are copied by hash from the previous state's files, or from the vectors kept one per
text under ``EMBEDDINGS_DIR/returned/`` (what an engine's reranker encoded, see ``CandidateVectors``).

Computing them is a job (``EmbeddingBuild``): ``embeddings_plan`` lists the texts to encode and splits
them into parts of ``PART_SIZE``; each part is one Celery task (``rankers.embeddings_part``) whose
vectors go to their own file, written atomically, so parts run on any worker, a killed worker's part
is simply done again, and finished parts are never redone. The part that finds every part done
assembles the matrix. Ranking never builds: without vectors a semantic version ranks as BM25 does.

About 25 ms per answer on 2 cores (batch 16, 128 tokens): 1,400 answers in ~30 s; 100,000 in ~40 min.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import cast

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from corpus.models import Answer, Collection
from jobs import job_claim, rows_take_over, stale_since
from rankers.candidate_store import CandidateStore, open_store, text_key
from rankers.embedding import (
    DIMENSION,
    INTRA_OP_THREADS,
    SINGLE_THREADS,
    EmbeddingUnavailable,
    Encoder,
    load_encoder,
    text_hash,
)
from rankers.index import CollectionIndex
from rankers.models import BuildStatus, EmbeddingBuild

logger = logging.getLogger(__name__)

PART_SIZE = 256
# How long a training waits for embeddings that other processes are computing.
BUILD_WAIT_SECONDS = 3600
BATCH_SIZE = 16
QUESTION_CACHE_SIZE = 4096

_vectors: dict[int, tuple[str, np.ndarray]] = {}
_vectors_lock = threading.Lock()
_questions: OrderedDict[str, np.ndarray] = OrderedDict()
_questions_lock = threading.Lock()


def embeddings_dir(*, collection_id: int) -> Path:
    return Path(settings.EMBEDDINGS_DIR) / f"collection-{collection_id}"


def _vectors_file(collection_id: int, fingerprint: str) -> Path:
    return embeddings_dir(collection_id=collection_id) / f"vectors-{fingerprint}.npy"


def _hashes_file(collection_id: int, fingerprint: str) -> Path:
    return embeddings_dir(collection_id=collection_id) / f"hashes-{fingerprint}.npy"


def _plan_file(collection_id: int, fingerprint: str) -> Path:
    return embeddings_dir(collection_id=collection_id) / f"plan-{fingerprint}.npz"


def _part_file(collection_id: int, fingerprint: str, part: int) -> Path:
    return embeddings_dir(collection_id=collection_id) / f"part-{fingerprint}-{part}.npy"


def _save(path: Path, array: np.ndarray) -> None:
    """Write then rename, so a reader (or a killed writer) never leaves half a file under the name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as out:
        np.save(out, array)
    tmp.replace(path)


def answer_text(title: str, body: str) -> str:
    return f"{title}. {body}" if title else body


def _texts(index: CollectionIndex) -> list[str]:
    rows = dict(
        (external_id, answer_text(title, body))
        for external_id, title, body in Answer.objects.filter(collection_id=index.collection_id).values_list(
            "external_id", "title", "body"
        )
    )
    return [rows.get(external_id, "") for external_id in index.ids]


def answer_vectors(*, index: CollectionIndex) -> np.ndarray | None:
    """The (answers × 384) unit vectors of the index's answers, or None when they are not built yet."""
    cached = _vectors.get(index.collection_id)
    if cached is not None and cached[0] == index.fingerprint:
        return cached[1]
    path = _vectors_file(index.collection_id, index.fingerprint)
    if not path.exists():
        return None
    matrix = np.load(path, mmap_mode="r")
    if matrix.shape != (index.size, DIMENSION):
        logger.warning(
            "embeddings file %s has shape %s, expected %s", path, matrix.shape, (index.size, DIMENSION)
        )
        return None
    with _vectors_lock:
        _vectors[index.collection_id] = (index.fingerprint, matrix)
    return matrix


# The onnxruntime threads this process encodes questions and an engine's candidates with (the builds'
# parts always use the default two).
_encode_threads = INTRA_OP_THREADS


def encode_on_one_thread() -> None:
    """Make this process encode questions and an engine's candidates on one thread (``ranker_server``, issue
    35 §4): a question's ~25 tokens are ~8 ms of one core either way; on one thread the encoding has no
    hand-offs between threads to wait for, and leaves the other core to the engine and the other requests.
    The vectors are the same bit for bit (tests/rankers/test_embedding.py). The process then loads that
    session alone (each session holds the model's weights, ~110 MB once loaded)."""
    global _encode_threads
    _encode_threads = SINGLE_THREADS


def _encoder() -> Encoder:
    return load_encoder(threads=_encode_threads)


def question_vectors(texts: list[str]) -> np.ndarray:
    """Unit vectors of question texts, from an in-process cache when asked before (~8 ms of a core each
    otherwise; on the threads ``encode_on_one_thread`` may have set).

    Raises EmbeddingUnavailable when the model cannot be loaded.
    """
    keys = [text_hash(text) for text in texts]
    missing = [i for i, key in enumerate(keys) if key not in _questions]
    if missing:
        encoded = _encoder().encode([texts[i] for i in missing], batch_size=BATCH_SIZE)
        with _questions_lock:
            for i, vector in zip(missing, encoded, strict=True):
                _questions[keys[i]] = vector
            while len(_questions) > QUESTION_CACHE_SIZE:
                _questions.popitem(last=False)
    with _questions_lock:
        return np.vstack([_questions[key] for key in keys]) if keys else np.zeros((0, DIMENSION), np.float32)


def forget_vectors() -> None:
    """Forget what this process holds: the matrices and stores it opened, the vectors it keeps in memory."""
    _vectors.clear()
    _questions.clear()
    _returned.clear()
    _stores.clear()


# ------------------------------------------------------------------ answers an engine returned

RETURNED_CACHE_SIZE = 50_000  # vectors held in memory (1.5 kB each)
_returned: OrderedDict[str, np.ndarray] = OrderedDict()
_returned_lock = threading.Lock()
# The index-ordered candidate stores (rankers.candidate_store) opened, by (directory, fingerprint).
_stores: dict[tuple[str, str], CandidateStore | None] = {}
_stores_lock = threading.Lock()


def answer_texts(*, index: CollectionIndex) -> list[str]:
    """The text each answer's vector is made of, in index order (one query; the caller keeps it)."""
    return _texts(index)


def _returned_file(key: str, root: Path | None = None) -> Path:
    """The file of one text's vector (``key``: its text hash) under ``root`` (default ``EMBEDDINGS_DIR``)."""
    return Path(root or settings.EMBEDDINGS_DIR) / "returned" / key[:2] / f"{key}.npy"


def vectors_keep(*, keys: list[str], vectors: np.ndarray, root: Path | None = None) -> int:
    """Keep vectors computed elsewhere (``keys``: their texts' ``text_hash``) in the one-file-per-text store
    under ``root`` (default ``EMBEDDINGS_DIR``), where builds and engine rerankers find them by text hash.
    A text already kept is left as it is. Returns how many were added."""
    if vectors.shape != (len(keys), DIMENSION):
        raise ValueError(f"vectors have shape {vectors.shape}, expected {(len(keys), DIMENSION)}")
    added = 0
    for key, vector in zip(keys, vectors, strict=True):
        path = _returned_file(key, root)
        if not path.exists():
            _save(path, np.asarray(vector, dtype=np.float32))
            added += 1
    return added


class CandidateVectors:
    """Vectors of the answers a first stage (a search engine) returned, for rerankers of an engine.

    Only answers an engine actually returns are encoded, when first met, and kept by text hash in
    memory and as one file each under ``EMBEDDINGS_DIR/returned/`` (so a million-answer index needs
    only the vectors of what questions retrieve, and a restarted server finds them again), and in the
    collection state's index-ordered store (``rankers.candidate_store``), where the 50 candidates of a
    rerank are one read, in any process, after a restart too. When the collection's full matrix is
    built, its rows are used; a text that another built matrix holds is taken from there. Safe to share
    between threads.
    """

    def __init__(self, *, index: CollectionIndex, texts: list[str]) -> None:
        self.index = index
        self.texts = texts
        self._keys: dict[int, str] = {}
        self._built: dict[bytes, np.ndarray] | None = None

    def _key(self, position: int) -> str:
        key = self._keys.get(position)
        if key is None:
            key = self._keys[position] = text_hash(self.texts[position])
        return key

    def _lookup(self, key: str) -> np.ndarray | None:
        with _returned_lock:
            vector = _returned.get(key)
            if vector is not None:
                _returned.move_to_end(key)
                return vector
        path = _returned_file(key)
        if not path.exists():
            return None
        vector = np.load(path)
        self._keep(key, vector)
        return vector

    @staticmethod
    def _keep(key: str, vector: np.ndarray) -> None:
        with _returned_lock:
            _returned[key] = vector
            while len(_returned) > RETURNED_CACHE_SIZE:
                _returned.popitem(last=False)

    def _store(self) -> CandidateStore | None:
        directory = embeddings_dir(collection_id=self.index.collection_id)
        key = (str(directory), self.index.fingerprint)
        if key not in _stores:
            with _stores_lock:
                if key not in _stores:
                    _stores[key] = open_store(directory, self.index.fingerprint, self.index.size)
        return _stores[key]

    def _vectors(self, positions: np.ndarray, *, encode: bool) -> np.ndarray | None:
        """The candidates' vectors: the index-ordered store's rows (one read for all of them), then for the
        rest the memory cache, the per-text files, a built matrix and (``encode``) the model, in that
        order; what the store lacked is written to it. None when one is missing and ``encode`` is False."""
        full = answer_vectors(index=self.index)
        if full is not None:
            return np.asarray(full[positions])
        if not len(positions):
            return np.zeros((0, DIMENSION), np.float32)
        keys = [self._key(int(p)) for p in positions]
        expected = np.array([text_key(key) for key in keys], dtype=np.uint64)
        store = self._store()
        if store is not None:
            rows, found = store.read(positions, expected)
        else:
            rows, found = np.zeros((len(positions), DIMENSION), np.float32), np.zeros(len(positions), bool)
        if found.all():
            return rows
        rest = np.flatnonzero(~found)
        vectors = self._elsewhere(positions[rest], [keys[i] for i in rest], encode=encode)
        if vectors is None:
            return None
        rows[rest] = vectors
        if store is not None:
            store.write(positions[rest], expected[rest], vectors)
        return rows

    def cached(self, positions: np.ndarray) -> np.ndarray | None:
        """The candidates' vectors if every one is known already, else None (nothing is encoded)."""
        return self._vectors(positions, encode=False)

    def of(self, positions: np.ndarray) -> np.ndarray:
        """The candidates' vectors, encoding (and keeping) the ones met for the first time.

        Raises EmbeddingUnavailable when the model cannot be loaded.
        """
        return cast(np.ndarray, self._vectors(positions, encode=True))

    def _elsewhere(self, positions: np.ndarray, keys: list[str], *, encode: bool) -> np.ndarray | None:
        """The vectors of texts the store lacks: memory, per-text files, built matrices, then the model."""
        found: dict[str, np.ndarray | None] = {key: self._lookup(key) for key in dict.fromkeys(keys)}
        missing = [key for key, vector in found.items() if vector is None]
        if missing and not encode:
            return None
        if missing and self._built is None:
            # Texts some collection's built matrix already holds (the same text, the same vector).
            self._built = _previous(self.index.collection_id, self.index.fingerprint)
        for key in missing:
            vector = (self._built or {}).get(key.encode())
            if vector is not None:
                self._keep(key, vector)
                found[key] = vector
        missing = [key for key, vector in found.items() if vector is None]
        if missing:
            text_of = {key: self.texts[int(p)] for key, p in zip(keys, positions, strict=True)}
            encoded = _encoder().encode([text_of[key] for key in missing], batch_size=BATCH_SIZE)
            for key, vector in zip(missing, encoded, strict=True):
                _save(_returned_file(key), vector)
                self._keep(key, vector)
                found[key] = vector
        return np.vstack([cast(np.ndarray, found[key]) for key in keys])


# ------------------------------------------------------------------------------------------ building


def embeddings_build_for(*, index: CollectionIndex) -> tuple[EmbeddingBuild, bool]:
    """The build row of the index's state, created QUEUED if there is none; and whether it is new.

    A failed build, or a finished one whose vectors file is gone, is reset to QUEUED: asking again retries.
    """
    with transaction.atomic():
        build, created = EmbeddingBuild.objects.get_or_create(
            collection_id=index.collection_id, fingerprint=index.fingerprint
        )
        lost = (
            build.status == BuildStatus.SUCCEEDED
            and not _vectors_file(index.collection_id, index.fingerprint).exists()
        )  # EMBEDDINGS_DIR wiped or moved since
        if build.status == BuildStatus.FAILED or lost:
            EmbeddingBuild.objects.filter(pk=build.pk).update(
                status=BuildStatus.QUEUED, error="", parts_done=0, parts_total=0
            )
            build.refresh_from_db()
            created = True
    return build, created


def _previous(collection_id: int, fingerprint: str) -> dict[bytes, np.ndarray]:
    """{text hash: vector} from the latest other state of this collection and the latest state of any
    collection (a re-imported collection, or a copy, reuses everything: the same text, the same vector)."""
    root = Path(settings.EMBEDDINGS_DIR)
    own = [
        p
        for p in embeddings_dir(collection_id=collection_id).glob("vectors-*.npy")
        if fingerprint not in p.name
    ]
    anywhere = [p for p in root.glob("collection-*/vectors-*.npy") if fingerprint not in p.name]
    known: dict[bytes, np.ndarray] = {}
    for states in (anywhere, own):  # the collection's own state last, so it wins
        if not states:
            continue
        latest = max(states, key=lambda p: p.stat().st_mtime)
        hashes_path = latest.with_name(latest.name.replace("vectors-", "hashes-"))
        if hashes_path.exists():
            vectors, hashes = np.load(latest), np.load(hashes_path)
            known.update((bytes(h), vectors[i]) for i, h in enumerate(hashes))
    return known


def _returned_vectors(hashes: Iterable[bytes]) -> dict[bytes, np.ndarray]:
    """{text hash: vector} of the texts kept one per file under ``returned/`` (a file that cannot be read
    is left out: its text is encoded again)."""
    known: dict[bytes, np.ndarray] = {}
    for key in dict.fromkeys(hashes):
        path = _returned_file(key.decode())
        if not path.exists():
            continue
        try:
            vector = np.load(path)
        except (OSError, ValueError):
            continue
        if vector.shape == (DIMENSION,):
            known[key] = vector
    return known


def embeddings_plan(*, build_id: int, index: CollectionIndex, worker: str = "") -> list[int]:
    """Claim a QUEUED build and plan it: which answers to encode, in which parts. Returns the parts to run.

    A build already planned (RUNNING) returns its unfinished parts, so planning twice is harmless.
    """
    claimed = job_claim(EmbeddingBuild, pk=build_id)
    build = EmbeddingBuild.objects.get(pk=build_id)
    plan_path = _plan_file(build.collection_id, build.fingerprint)
    if not claimed:
        if build.status != BuildStatus.RUNNING or not plan_path.exists():
            return []
        return _unfinished(build)
    try:
        load_encoder()  # fail the build now, with the reason, rather than in every part
    except EmbeddingUnavailable as exc:
        _fail(build.pk, str(exc))
        return []
    texts = _texts(index)
    hashes = np.array([text_hash(t).encode() for t in texts], dtype="S64")
    known = _previous(build.collection_id, build.fingerprint)
    known.update(_returned_vectors(bytes(h) for h in hashes if bytes(h) not in known))
    reused = [i for i, h in enumerate(hashes) if bytes(h) in known]
    todo = np.array([i for i, h in enumerate(hashes) if bytes(h) not in known], dtype=np.int64)
    reused_vectors = (
        np.vstack([known[bytes(hashes[i])] for i in reused])
        if reused
        else np.zeros((0, DIMENSION), np.float32)
    )
    plan_path.parent.mkdir(parents=True, exist_ok=True)
    tmp = plan_path.with_name(f".{plan_path.name}.tmp")
    with open(tmp, "wb") as out:
        np.savez(
            out,
            ids=np.array(index.ids, dtype=str),
            hashes=hashes,
            todo=todo,
            reused=np.array(reused, dtype=np.int64),
            vectors=reused_vectors,
        )
    tmp.replace(plan_path)
    parts = -(-len(todo) // PART_SIZE)
    EmbeddingBuild.objects.filter(pk=build.pk).update(
        answers_total=len(texts), answers_reused=len(reused), parts_total=parts, heartbeat_at=timezone.now()
    )
    if parts == 0:
        embeddings_assemble(build_id=build.pk)
        return []
    return list(range(parts))


def _unfinished(build: EmbeddingBuild) -> list[int]:
    return [
        part
        for part in range(build.parts_total)
        if not _part_file(build.collection_id, build.fingerprint, part).exists()
    ]


def _fail(build_id: int, error: str) -> None:
    EmbeddingBuild.objects.filter(pk=build_id).update(
        status=BuildStatus.FAILED, error=error[:2000], finished_at=timezone.now()
    )


def embeddings_part(*, build_id: int, part: int) -> None:
    """Encode one part's answers (unless its file exists), then assemble if it was the last one."""
    build = EmbeddingBuild.objects.filter(pk=build_id, status=BuildStatus.RUNNING).first()
    if build is None:
        return
    path = _part_file(build.collection_id, build.fingerprint, part)
    if not path.exists():
        try:
            with np.load(_plan_file(build.collection_id, build.fingerprint)) as plan:
                positions = plan["todo"][part * PART_SIZE : (part + 1) * PART_SIZE]
                wanted = [str(external_id) for external_id in plan["ids"][positions]]
        except FileNotFoundError:
            return  # another process assembled the build (and removed its plan) meanwhile
        rows = Answer.objects.filter(collection_id=build.collection_id, external_id__in=wanted)
        texts_by_id = {
            external_id: answer_text(title, body)
            for external_id, title, body in rows.values_list("external_id", "title", "body")
        }
        texts = [texts_by_id.get(external_id, "") for external_id in wanted]
        try:
            vectors = load_encoder().encode(texts, batch_size=BATCH_SIZE).astype(np.float32)
        except EmbeddingUnavailable as exc:
            _fail(build.pk, str(exc))
            return
        _save(path, vectors)
    done = build.parts_total - len(_unfinished(build))
    EmbeddingBuild.objects.filter(pk=build.pk, status=BuildStatus.RUNNING).update(
        parts_done=done, heartbeat_at=timezone.now()
    )
    if done == build.parts_total:
        embeddings_assemble(build_id=build.pk)


def embeddings_assemble(*, build_id: int) -> bool:
    """Put the reused and the parts' vectors in index order, save them, and finish the build."""
    with transaction.atomic():
        build = EmbeddingBuild.objects.select_for_update().get(pk=build_id)
        if build.status != BuildStatus.RUNNING:
            return False
        if not _plan_file(build.collection_id, build.fingerprint).exists() or _unfinished(build):
            return False
        with np.load(_plan_file(build.collection_id, build.fingerprint)) as plan:
            hashes, todo, reused, reused_vectors = (
                plan["hashes"],
                plan["todo"],
                plan["reused"],
                plan["vectors"],
            )
        matrix = np.zeros((len(hashes), DIMENSION), dtype=np.float32)
        if len(reused):
            matrix[reused] = reused_vectors
        for part in range(build.parts_total):
            positions = todo[part * PART_SIZE : (part + 1) * PART_SIZE]
            matrix[positions] = np.load(_part_file(build.collection_id, build.fingerprint, part))
        _save(_hashes_file(build.collection_id, build.fingerprint), hashes)
        _save(_vectors_file(build.collection_id, build.fingerprint), matrix)
        finished = timezone.now()
        EmbeddingBuild.objects.filter(pk=build.pk).update(
            status=BuildStatus.SUCCEEDED,
            parts_done=build.parts_total,
            finished_at=finished,
            seconds=round((finished - (build.started_at or finished)).total_seconds(), 3),
        )
    for part in range(build.parts_total):
        _part_file(build.collection_id, build.fingerprint, part).unlink(missing_ok=True)
    _plan_file(build.collection_id, build.fingerprint).unlink(missing_ok=True)
    return True


def embeddings_build_now(
    *, collection: Collection, index: CollectionIndex, progress: Callable[[float], None] = lambda f: None
) -> np.ndarray:
    """The index's answer vectors, computed here and now when missing (a training job does this; a
    ranking request never does). Works beside a build the workers run at the same time: it takes the
    parts nobody has finished (a part done twice is written twice, harmlessly) and waits for a plan
    another process is writing.

    Raises EmbeddingUnavailable, with the reason the build recorded, when they cannot be computed.
    """
    vectors = answer_vectors(index=index)
    if vectors is not None:
        return vectors
    build, _ = embeddings_build_for(index=index)
    deadline = time.monotonic() + BUILD_WAIT_SECONDS
    while time.monotonic() < deadline:
        build.refresh_from_db()
        if build.status in (BuildStatus.SUCCEEDED, BuildStatus.FAILED):
            break
        if build.status == BuildStatus.QUEUED:
            parts = embeddings_plan(build_id=build.pk, index=index)
        elif _plan_file(build.collection_id, build.fingerprint).exists():
            parts = _unfinished(build)
        else:
            time.sleep(0.2)  # another process has claimed the build and is writing its plan
            continue
        for done, part in enumerate(parts, start=1):
            embeddings_part(build_id=build.pk, part=part)
            progress(done / len(parts))
        if not parts:
            embeddings_assemble(build_id=build.pk)
            time.sleep(0.2)
    vectors = answer_vectors(index=index)
    if vectors is None:
        raise EmbeddingUnavailable(build.error or f"the embeddings build is {build.status}")
    return vectors


def embeddings_resume(*, stale_seconds: int) -> list[tuple[int, int]]:
    """(build, part) pairs to queue again: unfinished parts of builds whose workers went silent (each
    build taken over, its heartbeat renewed, by one conditional UPDATE: ``jobs.rows_take_over``)."""
    silent = Q(heartbeat_at__lt=stale_since(stale_seconds)) | Q(heartbeat_at__isnull=True)
    running = EmbeddingBuild.objects.filter(status=BuildStatus.RUNNING)
    taken = rows_take_over(running, silent, heartbeat_at=timezone.now())
    pending: list[tuple[int, int]] = []
    for build in EmbeddingBuild.objects.filter(pk__in=taken):
        pending += [(build.pk, part) for part in _unfinished(build)]
    return pending
