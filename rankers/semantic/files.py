"""Where a collection's embeddings live on disk, and the two ways of writing a file there (replace, or
write once)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import numpy as np
from django.conf import settings


def embeddings_dir(*, collection_id: int) -> Path:
    return Path(settings.EMBEDDINGS_DIR) / f"collection-{collection_id}"


def _vectors_file(collection_id: int, fingerprint: str) -> Path:
    return embeddings_dir(collection_id=collection_id) / f"vectors-{fingerprint}.npy"


def _hashes_file(collection_id: int, fingerprint: str) -> Path:
    return embeddings_dir(collection_id=collection_id) / f"hashes-{fingerprint}.npy"


def _plan_file(collection_id: int, fingerprint: str) -> Path:
    return embeddings_dir(collection_id=collection_id) / f"plan-{fingerprint}.npz"


def _todo_file(collection_id: int, fingerprint: str) -> Path:
    """The external ids to encode, in part order: each part maps it and reads its own slice only."""
    return embeddings_dir(collection_id=collection_id) / f"todo-{fingerprint}.npy"


def _part_file(collection_id: int, fingerprint: str, part: int) -> Path:
    return embeddings_dir(collection_id=collection_id) / f"part-{fingerprint}-{part}.npy"


def _save(path: Path, array: np.ndarray) -> None:
    """Write then rename, so a reader (or a killed writer) never leaves half a file under the name."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as out:
        np.save(out, array)
    tmp.replace(path)


def _save_first(path: Path, array: np.ndarray) -> bool:
    """Write ``array`` under ``path`` unless a file is there already; True when this call put it there.

    The file is written aside, then hard-linked under its name, which fails when the name exists: of two
    processes finishing the same part, exactly one counts it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    with open(tmp, "wb") as out:
        np.save(out, array)
    try:
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        tmp.unlink()
    return True


def _returned_file(key: str, root: Path | None = None) -> Path:
    """The file of one text's vector (``key``: its text hash) under ``root`` (default ``EMBEDDINGS_DIR``)."""
    return Path(root or settings.EMBEDDINGS_DIR) / "returned" / key[:2] / f"{key}.npy"


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
