"""gunicorn's settings for the web app. gunicorn reads this file from its working directory (the image's
/app, the bench, the tests' servers); command-line options override it.

Threaded workers whose queue the app can see (``config/gunicorn_worker.py``): a request that waited
longer than ``WEB_MAX_QUEUE_MS`` for a thread is refused at once with 503 + Retry-After
(``config/admission.py``) instead of queueing until clients time out. One worker process per core
(``WEB_CONCURRENCY``, default 2), each with ``WEB_THREADS`` threads (default 4: a save spends part of its
time waiting for PostgreSQL, and another thread uses the core meanwhile; more threads only contend for
the interpreter lock). See bench/README.md, "Rating saves under load".
"""

from config.env import env_int
from config.warmup import web_worker_warm_up

worker_class = "config.gunicorn_worker.ThreadWorker"
workers = env_int("WEB_CONCURRENCY", 2, minimum=1)
threads = env_int("WEB_THREADS", 4, minimum=1)
# A connection waits in the kernel only until the worker accepts it (at once), so this bounds a burst.
backlog = 2048


def post_worker_init(worker) -> None:
    # Runs in each worker once it has loaded the app, before it accepts a request (config/warmup.py).
    web_worker_warm_up()
