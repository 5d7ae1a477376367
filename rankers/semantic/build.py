"""The embeddings build, a job (``EmbeddingBuild``): plan, parts on any worker, assembly, resume; see the
package's docstring."""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from corpus.models import Answer, Collection
from jobs import collection_state_announce, heartbeat_rows, job_claim, rows_take_over, stale_since
from rankers.embedding import (
    DIMENSION,
    EmbeddingUnavailable,
    load_encoder,
    text_hash,
)
from rankers.index import CollectionIndex
from rankers.models import BuildStatus, EmbeddingBuild
from rankers.semantic.encoding import BATCH_SIZE, _texts, answer_text, answer_vectors
from rankers.semantic.files import (
    _hashes_file,
    _part_file,
    _plan_file,
    _previous,
    _save,
    _save_first,
    _todo_file,
    _vectors_file,
    embeddings_dir,
)
from rankers.semantic.returned import _returned_vectors

PART_SIZE = 256
# How long a training waits for embeddings that other processes are computing.
BUILD_WAIT_SECONDS = 3600


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
    for stale in embeddings_dir(collection_id=build.collection_id).glob(f"part-{build.fingerprint}-*.npy"):
        stale.unlink(missing_ok=True)  # of an earlier plan of this state (a failed build asked again)
    reused_vectors = (
        np.vstack([known[bytes(hashes[i])] for i in reused])
        if reused
        else np.zeros((0, DIMENSION), np.float32)
    )
    _save(_todo_file(build.collection_id, build.fingerprint), np.array(index.ids, dtype=str)[todo])
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
    """Encode one part's answers (unless its file exists), then assemble if it was the last one.

    Its cost does not grow with the build (issue 37: it was N^1.75): it reads its own slice of the
    mapped todo file, not the whole plan, and counts itself done with one UPDATE (``parts_done + 1``, by
    the one process whose file took the name) instead of looking for every part's file. Only a part
    found already done (a redelivered or retaken part) looks at every part's file, to assemble a build
    whose last part's process died between writing its file and counting it.
    """
    build = EmbeddingBuild.objects.filter(pk=build_id, status=BuildStatus.RUNNING).first()
    if build is None:
        return
    path = _part_file(build.collection_id, build.fingerprint, part)
    if path.exists():
        if not _unfinished(build):
            embeddings_assemble(build_id=build.pk)
        return
    try:
        todo = np.load(_todo_file(build.collection_id, build.fingerprint), mmap_mode="r")
    except FileNotFoundError:
        return  # another process assembled the build (and removed its plan) meanwhile
    wanted = [str(external_id) for external_id in todo[part * PART_SIZE : (part + 1) * PART_SIZE]]
    del todo
    # Without the model's default ordering (collection, id), which SQLite serves by walking every answer
    # of the collection in id order rather than looking these 256 up by external id: a part cost O(N).
    rows = Answer.objects.filter(collection_id=build.collection_id, external_id__in=wanted).order_by()
    texts_by_id = {
        external_id: answer_text(title, body)
        for external_id, title, body in rows.values_list("external_id", "title", "body")
    }
    texts = [texts_by_id.get(external_id, "") for external_id in wanted]
    running = EmbeddingBuild.objects.filter(pk=build.pk, status=BuildStatus.RUNNING)
    try:
        # Beat while encoding: a part can take longer than the stale limit (256 answers at 50 ms on a busy
        # core), and a silent build has its unfinished parts queued again, so a live part was encoded twice.
        with heartbeat_rows(running, stale_seconds=settings.EVALUATION_STALE_SECONDS):
            vectors = load_encoder().encode(texts, batch_size=BATCH_SIZE).astype(np.float32)
    except EmbeddingUnavailable as exc:
        _fail(build.pk, str(exc))
        return
    if not _save_first(path, vectors):
        return  # another process finished this part meanwhile, and counted it
    running.update(parts_done=F("parts_done") + 1, heartbeat_at=timezone.now())
    done = running.values_list("parts_done", flat=True).first()
    if done is not None and done >= build.parts_total:
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
        collection_state_announce(collection_id=build.collection_id)
    for part in range(build.parts_total):
        _part_file(build.collection_id, build.fingerprint, part).unlink(missing_ok=True)
    _plan_file(build.collection_id, build.fingerprint).unlink(missing_ok=True)
    _todo_file(build.collection_id, build.fingerprint).unlink(missing_ok=True)
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
        # Every part done but none assembled (the last part's process died after writing its file): part
        # 0 again, which finds its file and assembles.
        pending += [(build.pk, part) for part in _unfinished(build) or [0][: build.parts_total]]
    return pending
