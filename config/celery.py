"""The Celery app. Tasks live in each app's tasks.py and are found by autodiscovery."""

import contextlib
import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

# The write end of a pipe bin/run passes to the worker it supervises: the worker says on it that it is
# ready (the moment its "ready." log line marks), so bin/run prints the URL and logins once everything
# is up, without reading the worker's INFO log, which `make run` keeps quiet.
READY_FD_VARIABLE = "RANK_TRAINER_READY_FD"


@worker_ready.connect
def ready_tell_supervisor(sender=None, **kwargs) -> None:
    fd = os.environ.pop(READY_FD_VARIABLE, None)
    if fd is None:
        return
    with contextlib.suppress(OSError, ValueError):
        os.write(int(fd), b"ready\n")
        os.close(int(fd))
