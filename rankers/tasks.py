"""Celery tasks of rankers: thin callers of the index and the embeddings (``rankers.semantic``)."""

from __future__ import annotations

import logging

from celery import shared_task
from django.conf import settings

from corpus.models import Collection
from rankers import semantic
from rankers.index import load_index
from rankers.models import BuildStatus, EmbeddingBuild

logger = logging.getLogger(__name__)


@shared_task(name="rankers.index_build")
def index_build(*, collection_id: int) -> str | None:
    """Build (or check) a collection's BM25 index ahead of use, e.g. right after an import, then queue
    its answer embeddings.

    Otherwise the first process that ranks after answers change builds the index (about 30 s per
    100,000 answers). Returns the index fingerprint.
    """
    collection = Collection.objects.filter(pk=collection_id).first()
    if collection is None:
        return None
    index = load_index(collection=collection)
    if semantic.answer_vectors(index=index) is None:
        build, created = semantic.embeddings_build_for(index=index)
        if created:
            embeddings_plan.apply_async(kwargs={"build_id": build.pk})
    return index.fingerprint


@shared_task(name="rankers.embeddings_plan", acks_late=True)
def embeddings_plan(*, build_id: int) -> int:
    """Claim an embeddings build and fan its parts out over the workers. Returns the parts queued."""
    build = EmbeddingBuild.objects.select_related("collection").filter(pk=build_id).first()
    if build is None:
        return 0
    index = load_index(collection=build.collection)
    if index.fingerprint != build.fingerprint:
        # The answers changed since this build was asked for; the build of the new state replaces it.
        EmbeddingBuild.objects.filter(pk=build.pk, status=BuildStatus.QUEUED).update(
            status=BuildStatus.FAILED, error="The answers changed before this build started."
        )
        return 0
    parts = semantic.embeddings_plan(build_id=build.pk, index=index)
    for part in parts:
        embeddings_part.apply_async(kwargs={"build_id": build.pk, "part": part})
    return len(parts)


@shared_task(name="rankers.embeddings_part", acks_late=True)
def embeddings_part(*, build_id: int, part: int) -> None:
    """Encode one part of a build's answers (idempotent); the last part assembles the vectors."""
    semantic.embeddings_part(build_id=build_id, part=part)


@shared_task(name="rankers.embeddings_sweep")
def embeddings_sweep() -> int:
    """Beat, every minute: queue again the parts of builds whose workers went silent."""
    pending = semantic.embeddings_resume(stale_seconds=settings.EVALUATION_STALE_SECONDS)
    for build_id, part in pending:
        embeddings_part.apply_async(kwargs={"build_id": build_id, "part": part})
    return len(pending)
