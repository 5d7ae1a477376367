"""Celery tasks of rankers: thin callers of the index."""

from __future__ import annotations

from celery import shared_task

from corpus.models import Collection
from rankers.index import load_index


@shared_task(name="rankers.index_build")
def index_build(*, collection_id: int) -> str | None:
    """Build (or check) a collection's BM25 index ahead of use, e.g. right after an import.

    Otherwise the first process that ranks after answers change builds it (about 30 s per 100,000
    answers). Returns the index fingerprint.
    """
    collection = Collection.objects.filter(pk=collection_id).first()
    if collection is None:
        return None
    return load_index(collection=collection).fingerprint
