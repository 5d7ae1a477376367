"""Queuing a job: the broker checked before anything is stored (``broker_require``, raising the job's
``JobUnavailable``), and its Celery task sent by name once the job's row is committed
(``enqueue_after_commit``), so services never import task modules."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from celery import current_app
from django.db import transaction

from jobs.broker import BrokerUnreachable, broker_check


class JobUnavailable(Exception):
    """A job cannot be queued: the task queue (the Celery broker) is not reachable.

    Each job raises its own subclass (``EvaluationUnavailable``, ``TrainingUnavailable``,
    ``JudgingUnavailable``), worded by its ``explain``.
    """

    @classmethod
    def explain(cls, unreachable: BrokerUnreachable) -> str:
        """The message when the broker check failed with ``unreachable``."""
        return f"The job could not be queued: the task queue is not reachable ({unreachable})."


def broker_require(unavailable: type[JobUnavailable]) -> None:
    """Raise ``unavailable`` (its message from its ``explain``) unless a connection to the broker opens
    now: the check a service makes before it stores a job."""
    try:
        broker_check()
    except BrokerUnreachable as exc:
        raise unavailable(unavailable.explain(exc)) from exc


def enqueue_after_commit(
    task: str,
    *,
    kwargs: Mapping[str, object],
    failed: Callable[[Exception], object] | None = None,
    robust: bool = False,
) -> None:
    """Send the Celery task named ``task`` with ``kwargs`` once the current transaction commits (at
    once outside one), so no worker looks for a row not yet committed.

    When the publish fails, ``failed`` (if given) is called with the error, e.g. to mark the job
    failed and raise its JobUnavailable; otherwise the error propagates. ``robust``: a failed publish is
    logged, not raised (a job a request queues on the way, which must answer anyway; a sweep retries).
    """

    def send() -> None:
        try:
            current_app.send_task(task, kwargs=dict(kwargs))
        except Exception as exc:
            if failed is not None:
                failed(exc)
            raise

    transaction.on_commit(send, robust=robust)
