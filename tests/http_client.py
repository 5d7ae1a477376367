"""One HTTP client for the tests' requests to the servers they start (ranker, judge and engine servers,
the real OpenSearch and Solr nodes).

``httpx.get()`` and the like build a client per call, and with it a TLS context that loads the CA bundle:
62 ms of CPU each, for plain-HTTP requests that never use it. The readiness polls alone made 540 of
them a run (40 CPU-seconds). No keep-alive: the next server the tests start may reuse a port."""

from __future__ import annotations

import httpx

HTTP = httpx.Client(limits=httpx.Limits(max_keepalive_connections=0))
