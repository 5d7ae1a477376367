"""Celery tasks of the UBI log: thin callers of ubi.services."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from ubi import services


@shared_task(name="ubi.expire")
def ubi_expire() -> list[int]:
    """Beat, hourly: delete queries and events past UBI_RETENTION_DAYS."""
    return list(services.ubi_rows_expire(now=timezone.now(), days=settings.UBI_RETENTION_DAYS))
