"""Threads and memory settings shared by file reading and evaluation.

numpy releases the GIL in its loops, so blocks of a file and chunks of queries run truly in parallel on
a thread pool (:func:`default_threads` threads).
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

import numpy as np

__all__ = ["default_threads", "ordered_map", "run_parallel", "small_pages"]

T = TypeVar("T")
R = TypeVar("R")


def default_threads() -> int:
    """Worker threads for parsing and evaluation: ``RANK_TRAINER_METRICS_THREADS`` or the CPU count
    (at most 4).  numpy releases the GIL in its loops, so blocks and chunks run truly in parallel."""
    configured = os.environ.get("RANK_TRAINER_METRICS_THREADS")
    if configured:
        return max(1, int(configured))
    return max(1, min(4, os.cpu_count() or 1))


def run_parallel(work: Callable[[T], None], items: Sequence[T], threads: int | None) -> None:
    """``work(item)`` for every item on ``threads`` threads (default :func:`default_threads`); the first
    exception is raised."""
    threads = default_threads() if threads is None else max(1, threads)
    if threads == 1 or len(items) < 2:
        for item in items:
            work(item)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        for future in [pool.submit(work, item) for item in items]:
            future.result()


def ordered_map(work: Callable[[T], R], items: Iterator[T], threads: int) -> Iterator[R]:
    """``map(work, items)`` on a thread pool, results in order, a bounded number in flight."""
    if threads <= 1:
        yield from map(work, items)
        return
    with ThreadPoolExecutor(max_workers=threads) as pool:
        pending: deque[Future[R]] = deque()
        for item in items:
            pending.append(pool.submit(work, item))
            if len(pending) > 2 * threads:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


@contextlib.contextmanager
def small_pages() -> Iterator[None]:
    """Turn off numpy's ``madvise(MADV_HUGEPAGE)`` for new arrays while parsing / evaluating.

    With transparent huge pages in ``madvise`` mode the kernel may compact memory synchronously when
    a fresh huge page is first touched; filling the column arrays was 2-3x slower that way on the
    benchmark machine.  numpy's switch is process wide, so it is restored afterwards.
    """
    core = getattr(np, "_core", None) or getattr(np, "core", None)
    setter = getattr(getattr(core, "multiarray", None), "_set_madvise_hugepage", None)
    if setter is None:
        yield
        return
    previous = setter(False)
    try:
        yield
    finally:
        setter(previous)
