"""gunicorn's threaded worker, with each request stamped when it starts waiting for a thread.

gunicorn's ``gthread`` worker accepts connections as they come and hands each request to its thread pool;
when every thread is busy, the request waits in the pool's queue. The pool here records when each request
was handed over, so ``config.admission`` can tell how long it waited and refuse it (503) past a bound.
``get_thread_pool`` is gunicorn's documented hook for a custom pool; nothing else of the worker changes.
Configured in ``gunicorn.conf.py`` (``worker_class``).
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from gunicorn.workers.gthread import ThreadWorker as GunicornThreadWorker

from config.admission import queued


class StampingThreadPool(ThreadPoolExecutor):
    """A thread pool whose tasks know when they were submitted (``config.admission.queue_seconds``)."""

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future:
        at = time.monotonic()

        def run() -> Any:
            with queued(at):
                return fn(*args, **kwargs)

        return super().submit(run)


class ThreadWorker(GunicornThreadWorker):
    def get_thread_pool(self) -> ThreadPoolExecutor:
        return StampingThreadPool(max_workers=self.cfg.threads)
