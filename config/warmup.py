"""A web worker's preparation before its first request (gunicorn's ``post_worker_init``, gunicorn.conf.py).

Two costs otherwise land on the first requests a fresh worker serves, and on every request queued behind
them (bench/README.md, "Rating saves under load"):

- Django imports the URLconf, and with it every view, serializer and service, on the first request that
  resolves a URL: 0.3 s of CPU holding the interpreter lock, so the worker's other threads stall too.
- The garbage collector's full collections walk every object the process holds, the ~150,000 of Django
  and the app's modules included: 70-140 ms pauses, again for all threads. Those objects live as long as
  the process, so ``gc.freeze()`` moves them out of the collector's sight once they exist; a full
  collection then walks only what requests created (about 10 ms).
"""

from __future__ import annotations

import gc

from django.urls import get_resolver


def web_worker_warm_up() -> None:
    resolver = get_resolver()
    resolver.url_patterns  # noqa: B018  (imports the URLconf: every view and what it imports)
    resolver.reverse_dict  # noqa: B018  (what reverse() and {% url %} look names up in)
    # Collect first: garbage frozen now would never be freed.
    gc.collect()
    gc.freeze()
