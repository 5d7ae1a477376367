"""Core Celery tasks."""

from celery import shared_task


@shared_task(name="trainer.ping")
def ping(*, value: str) -> str:
    """Round-trip check used by the health check and by the test that proves a real worker runs tasks."""
    return value
