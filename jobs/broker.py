"""Whether the Celery broker can be reached now: the one check made before queuing a job (an evaluation,
a training, a judging run; ``jobs.queue.broker_require``) and by ``/healthz``, so they agree on what
"down" means and how long they wait."""

from __future__ import annotations

from celery import current_app

from jobs.reasons import failure_reason


class BrokerUnreachable(Exception):
    """No connection to the broker could be opened; the message names the error."""


def broker_check() -> None:
    """Open a connection to the broker (one try, a few seconds at most) or raise BrokerUnreachable."""
    try:
        with current_app.connection_for_write() as connection:
            connection.ensure_connection(max_retries=1, interval_start=0, interval_step=0.2, timeout=3)
    except Exception as exc:  # kombu raises OperationalError, OSError subclasses or library errors
        # Shown to people ("the task queue (Redis) is not reachable (...)"): in words, no class name or errno.
        raise BrokerUnreachable(failure_reason(exc)) from exc
