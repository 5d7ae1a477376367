"""The Django project shell: how the apps are put together and served, none of what they do.

- ``settings.py``: the one settings module, read from the environment (``env.py``)
- ``env.py``: the environment's readers, each failing loudly on a value it cannot use
- ``urls.py``: the root URLconf (each app's pages, the API and its docs), error handlers
- ``errors.py``: the 400/403/404/500 pages in the site's layout, JSON under /api/
- ``middleware.py``: errors no view can handle (JSON under /api/, the styled 404 with ``DEBUG=1``)
- ``csp.py``: the Content-Security-Policy middleware (``DEBUG=0``) and the API docs' policy
- ``admission.py``: bounded admission, 503 + Retry-After to a request that queued too long
- ``gunicorn_worker.py``: gunicorn's threaded worker, stamping when each request starts waiting
- ``warmup.py``: a gunicorn worker's preparation before its first request
- ``health.py``: /healthz, whether the database, the broker and the cache answer
- ``checks.py``: the system check refusing a database of the old, unlayered layout
- ``admin_site.py``: the admin site with links back to the app
- ``apps.py``: the shell as an installed app (registers ``checks``) and the admin's app config
- ``celery.py``: the Celery app (tasks live in each app's ``tasks.py``)
- ``wsgi.py``, ``asgi.py``: the servers' entry points
"""

from config.celery import app as celery_app

__all__ = ("celery_app",)
